// An invariant check that survives NDEBUG: prints what broke and aborts.
#pragma once

#include <cstdio>
#include <cstdlib>

#define HB_FUZZ_CHECK(cond)                                                                   \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
            std::abort();                                                                     \
        }                                                                                     \
    } while (0)
