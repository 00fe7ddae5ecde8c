/* RILL_API marks what librill exports: the functions declared in include/rill. Everything
 * else in the library is built with hidden visibility (-fvisibility=hidden), so an internal
 * function cannot become part of the ABI by accident; tests/unit/check_exports.sh checks
 * that librill exports nothing else. */
#ifndef RILL_API_H
#define RILL_API_H

#if defined(__GNUC__) || defined(__clang__)
#define RILL_API __attribute__((visibility("default")))
#else
#define RILL_API
#endif

#endif
