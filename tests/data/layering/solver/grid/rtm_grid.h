/* A fixture of tests/layering: the lowest solver sub-folder's header. */
