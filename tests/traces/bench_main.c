#include "app.h"
int main(int argc, char **argv) {
  return rtm_cmd_bench_traces(argc, argv);
}
