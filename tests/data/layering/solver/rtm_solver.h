/* A fixture of tests/layering: a solver header. */
