/* A fixture of tests/layering: app may use config, but not config's private header. */
#include "config_impl.h"
