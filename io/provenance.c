#define _POSIX_C_SOURCE 200809L /* gethostname, gmtime_r */
/* Where and when a run file or report was written (rtm_io_impl.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rtm_io_impl.h"

void rtm_io_provenance(rtm_io_provenance_t *p) {
  memset(p, 0, sizeof *p);
  const time_t now = time(NULL);
  struct tm utc;
  if (gmtime_r(&now, &utc)) strftime(p->created, sizeof p->created, "%Y-%m-%dT%H:%M:%SZ", &utc);
  if (gethostname(p->host, sizeof p->host - 1) != 0) snprintf(p->host, sizeof p->host, "unknown");
}
