/* Check macros of the CUDA tests (test_util.h is C only): a failure prints where and why
 * and ends the process at once (_exit: no teardown that could wait on a kernel that still
 * spins; under mpirun the other rank is then stopped by mpirun). */
#ifndef RILL_TESTS_GPU_CUDA_CHECK_CUH
#define RILL_TESTS_GPU_CUDA_CHECK_CUH

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);                                      \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        fflush(stdout);                                                                            \
        fflush(stderr);                                                                            \
        _exit(1);                                                                                  \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            FAIL(__VA_ARGS__);                                                                     \
        }                                                                                          \
    } while (0)

#define CU(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        CHECK_MSG(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));                     \
    } while (0)

#endif
