/* A fixture of tests/layering: the cpu backend's header. */
