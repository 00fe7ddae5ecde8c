/* Rill: the whole public API. */
#ifndef RILL_H
#define RILL_H

#include "rill/config.h"
#include "rill/status.h"
#include "rill/params.h"
#include "rill/runtime.h"
#include "rill/data.h"
#include "rill/dtd.h"
#include "rill/info.h"

#endif
