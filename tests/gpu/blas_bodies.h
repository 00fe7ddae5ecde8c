/* Bodies of the GPU tests' DTD classes, on tiles of tile_len doubles (each test sets it):
 * CUDA bodies on cuBLAS (the task's exec stream's handle) and the same on the CPU:
 *   axpy_gpu, axpy_cpu  y = a x + y   (args: VALUE a, INPUT x, INOUT y)
 *   scal_gpu, scal_cpu  y = s y       (args: VALUE s, INOUT y) */
#ifndef RILL_TEST_BLAS_BODIES_H
#define RILL_TEST_BLAS_BODIES_H

#include "rill/cuda.h"
#include "rill/dtd.h"

static int tile_len;

static rill_status_t axpy_gpu(rill_task_t *task)
{
    double a, *x, *y;
    rill_dtd_unpack_args(task, &a, &x, &y);
    return cublasDaxpy(rill_cuda_cublas(task), tile_len, &a, x, 1, y, 1) == CUBLAS_STATUS_SUCCESS
               ? RILL_SUCCESS
               : RILL_ERR_DEVICE;
}

static rill_status_t scal_gpu(rill_task_t *task)
{
    double s, *y;
    rill_dtd_unpack_args(task, &s, &y);
    return cublasDscal(rill_cuda_cublas(task), tile_len, &s, y, 1) == CUBLAS_STATUS_SUCCESS
               ? RILL_SUCCESS
               : RILL_ERR_DEVICE;
}

static rill_status_t axpy_cpu(rill_task_t *task)
{
    double a, *x, *y;
    rill_dtd_unpack_args(task, &a, &x, &y);
    for (int i = 0; i < tile_len; i++)
        y[i] += a * x[i];
    return RILL_SUCCESS;
}

static rill_status_t scal_cpu(rill_task_t *task)
{
    double s, *y;
    rill_dtd_unpack_args(task, &s, &y);
    for (int i = 0; i < tile_len; i++)
        y[i] *= s;
    return RILL_SUCCESS;
}

#endif
