/*
 * ikrig_paths.h: where a program built here finds its files. Inside the build tree it
 * reads the source tree's (Lua files, the view's page) and the build's (three.js);
 * anywhere else, the prefix's, relative to the executable (bin/../share/ikrig/...).
 */
#ifndef IKRIG_PATHS_H
#define IKRIG_PATHS_H

#include <stddef.h>

/* The running program's directory (from /proc/self/exe) into buf; 0, or -1 if unknown
 * or too long. */
int ikrig_exe_dir(char *buf, size_t size);
/* 1 when the running program lies inside the build tree it was built in. */
int ikrig_in_build_tree(void);

#endif
