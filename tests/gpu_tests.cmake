# GPU tests (issue: GPU backend)
