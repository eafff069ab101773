/* A fixture of tests/layering: a private header of config. */
