/*
 * replay.c: runs a fuzzer's entry point over files, without libFuzzer.
 *
 *   fuzz_core_replay FILE_OR_DIR...
 *
 * Every file given, and every file of every directory given, is read and passed to
 * LLVMFuzzerTestOneInput once. This is how the corpora run as regression tests in every
 * build (gcc, float, sanitizers), where libFuzzer is not there: an input that once broke
 * an invariant keeps being checked. Prints how many inputs ran; a broken invariant
 * aborts, as it does under libFuzzer.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  uint8_t *buf;
  long len;
  size_t got;
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return -1;
  }
  if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    fprintf(stderr, "replay: cannot read %s\n", path);
    return -1;
  }
  /* An exact-size copy, as libFuzzer passes it: reading past the end is caught. */
  buf = malloc(len > 0 ? (size_t)len : 1);
  if (!buf) {
    fclose(f);
    return -1;
  }
  got = fread(buf, 1, (size_t)len, f);
  fclose(f);
  LLVMFuzzerTestOneInput(buf, got);
  free(buf);
  return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Files of a directory in name order, so a run is the same everywhere. */
static int run_dir(const char *dir, long *count) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char **names = NULL;
  size_t n = 0, cap = 0, i;
  int status = 0;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      char **grown = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
      if (!grown) break;
      names = grown;
    }
    names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
    if (!names[n]) break;
    sprintf(names[n], "%s/%s", dir, e->d_name);
    n++;
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, by_name);
  for (i = 0; i < n; i++) {
    struct stat st;
    if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
      if (run_file(names[i]) != 0)
        status = -1;
      else
        (*count)++;
    }
    free(names[i]);
  }
  free(names);
  return status;
}

int main(int argc, char **argv) {
  long count = 0;
  int i, status = 0;
  for (i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
      status = 1;
    } else if (S_ISDIR(st.st_mode)) {
      if (run_dir(argv[i], &count) != 0) status = 1;
    } else if (run_file(argv[i]) != 0) {
      status = 1;
    } else {
      count++;
    }
  }
  printf("replay: %ld inputs, all invariants held\n", count);
  return status;
}
