package xdsbench

import "runtime"

func cpus() int { return runtime.NumCPU() }
