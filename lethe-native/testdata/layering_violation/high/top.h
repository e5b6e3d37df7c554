// Allowed: high may include low.
#include "low/base.h"
