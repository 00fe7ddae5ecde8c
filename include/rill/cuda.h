/* What a CUDA task body (rill_dtd_class_add_body(cls, RILL_BODY_CUDA, body)) uses: the
 * stream it enqueues on, the cuBLAS and cuSOLVER handles bound to that stream, a device
 * workspace, and a status word. Include it only in code compiled with the CUDA toolkit's
 * headers on the include path (Rill built with CUDA). */
#ifndef RILL_CUDA_H
#define RILL_CUDA_H

#include <stddef.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "rill/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The stream the body enqueues its work on. The body must not synchronise it: the GPU
 * manager sees the task complete when the stream has run what the body enqueued. NULL when
 * called outside a CUDA body. */
RILL_API cudaStream_t rill_cuda_stream(rill_task_t *task);
/** cuBLAS and cuSOLVER (dense) handles already bound to that stream (cuBLAS with its own
 * workspace, pointer mode host). */
RILL_API cublasHandle_t rill_cuda_cublas(rill_task_t *task);
RILL_API cusolverDnHandle_t rill_cuda_cusolver(rill_task_t *task);
/** Device memory the body may use while its work runs (e.g. cuSOLVER's work array):
 * *bytes gets its size (device_cuda_workspace). Shared by the tasks of one stream, which
 * run one after the other. */
RILL_API void *rill_cuda_workspace(rill_task_t *task, size_t *bytes);
/** A device-visible int, 0 when the body starts, that its kernels may set (cuSOLVER's
 * devInfo): a non-zero value once the stream ran the body fails the task, with the value
 * in the message. */
RILL_API int *rill_cuda_status_word(rill_task_t *task);
/** The CUDA device ordinal the body runs on. -1 outside a CUDA body. */
RILL_API int rill_cuda_device(rill_task_t *task);

#ifdef __cplusplus
}
#endif
#endif
