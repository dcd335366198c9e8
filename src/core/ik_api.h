/*
 * ik_api.h: IK_API marks what libik exports. The library is compiled with
 * -fvisibility=hidden, so everything else (the ik__ helpers the solvers share) stays
 * inside it; a program that links the static library sees no difference.
 */
#ifndef IK_API_H
#define IK_API_H

#if defined(__GNUC__) || defined(__clang__)
#define IK_API __attribute__((visibility("default")))
#else
#define IK_API
#endif

#endif
