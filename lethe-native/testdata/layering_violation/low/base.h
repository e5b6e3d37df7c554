// Points up: low may not include high.
#include "high/top.h"
