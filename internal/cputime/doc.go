// Package cputime reads the CPU time of the running process. Benchmarks
// report it per operation beside wall time because the build machine is
// shared: wall time there measures the neighbours as much as the code.
package cputime
