/* A fixture of tests/layering: the status header. */
