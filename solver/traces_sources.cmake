# trace pipeline sources (issue: CUDA-graph trace pipeline). Empty until it lands.
