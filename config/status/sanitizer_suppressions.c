/* LeakSanitizer's suppressions for the sanitizer build (RTM3D_SANITIZE=address,...), compiled
 * into rtm3d and every test executable there: what third-party libraries keep until exit and
 * never free. PLplot's figures load their cairo driver through libltdl, and fontconfig caches
 * the fonts it found; HDF5 1.10 keeps what it had read when it fails on a corrupt header or
 * on a file it could not close (a full disk), and its exit cleanup is off (rtm_io_startup).
 * Under mpirun, Open MPI's libraries keep about 3300 blocks (110 kB a rank, 4.1.4: libmpi,
 * libopen-pal, libopen-rte and libevent, from MPI_Init to MPI_Finalize), and PMIx, hwloc
 * are its and other MPIs' parts. p11-kit (loaded with GnuTLS under libcurl, HDF5's) keeps
 * 34 bytes from the newlocale of its constructor under a locale other than C (de_DE.UTF-8,
 * issue 32 D11). All of it outside rtm3d's code, matched by library name
 * only (a leak is suppressed when a frame of its stack lies in one of these libraries, and
 * none calls back into rtm3d): rtm3d's own leaks still count. */
const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void);

const char *__lsan_default_suppressions(void) {
  return "leak:libltdl.so\n"
         "leak:libfontconfig.so\n"
         "leak:libhdf5_serial.so\n"
         "leak:libhdf5.so\n"
         "leak:libmpi.so\n"
         "leak:libopen-pal.so\n"
         "leak:libopen-rte.so\n"
         "leak:libpmix.so\n"
         "leak:libhwloc.so\n"
         "leak:libp11-kit.so\n"
         "leak:libevent\n"; /* libevent-2.1, libevent_core, libevent_pthreads */
}

/* The stacks of allocations unwound through DWARF, not frame pointers: Open MPI's libraries
 * are built without frame pointers, so that the fast unwinder stops at their first frame,
 * and the components they load (mca_*.so) are unloaded by MPI_Finalize, so that such a
 * stack names no library at all and the suppressions above cannot match it (with the fast
 * unwinder a 2-rank run still reported 53 of Open MPI's leaks, 57 without them). It costs
 * nothing measurable (the sanitize tests: 162 s of CPU either way): rtm3d allocates little,
 * and never in its time loop. ASAN_OPTIONS still overrides it. */
const char *__asan_default_options(void) {
  return "fast_unwind_on_malloc=0";
}
