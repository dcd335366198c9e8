/*
 * crowd_character.h: the crowd benchmarks' character (tests/bench/bench_crowd.lua), for
 * the crowd's test and its C benchmark: hips, a spine of 5, two arms from the top of the
 * spine, two legs from the hips; each bone's parent and offset from it.
 */
#ifndef IK_CROWD_CHARACTER_H
#define IK_CROWD_CHARACTER_H

#define BONES 18

static const int crowd_parents[BONES] = {-1, 0, 1, 2, 3, 4, 5, 6, 7, 5, 9, 10, 0, 12, 13, 0, 15, 16};
static const double crowd_offsets[BONES][3] = {
    {0, 1, 0},         {0, 0.1, 0},      {0, 0.12, 0.01},  {0, 0.12, 0.01},  {0, 0.12, 0},
    {0, 0.12, -0.01},  {0.18, 0, 0},     {0.05, -0.28, 0}, {0, -0.25, 0.05}, {-0.18, 0, 0},
    {-0.05, -0.28, 0}, {0, -0.25, 0.05}, {0.1, -0.05, 0},  {0, -0.43, 0.03}, {0, -0.43, -0.03},
    {-0.1, -0.05, 0},  {0, -0.43, 0.03}, {0, -0.43, -0.03}};

#endif /* IK_CROWD_CHARACTER_H */
