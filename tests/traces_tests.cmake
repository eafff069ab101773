# trace pipeline tests (issue: trace pipeline)
