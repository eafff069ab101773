/* LeakSanitizer's suppressions for the sanitizer build (RTM3D_SANITIZE=address,...), compiled
 * into rtm3d and every test executable there: what third-party libraries keep until exit and
 * never free. PLplot's figures load their cairo driver through libltdl, and fontconfig caches
 * the fonts it found; HDF5 1.10 keeps what it had read when it fails on a corrupt header or
 * on a file it could not close (a full disk), and its exit cleanup is off (rtm_io_startup).
 * All of it outside rtm3d's code; rtm3d's own leaks still count. */
const char *__lsan_default_suppressions(void);

const char *__lsan_default_suppressions(void) {
  return "leak:libltdl.so\n"
         "leak:libfontconfig.so\n"
         "leak:libhdf5_serial.so\n"
         "leak:libhdf5.so\n";
}
