// Package compat is cudaenv's knowledge of which NVIDIA driver, cuDNN, host
// compiler, GPU architecture and PyTorch build go with which CUDA release.
//
// The tables live in data/*.tsv, one row per fact with the source it came
// from, and are compiled into tables_gen.go so the binary reads no files at
// run time. Host compiler limits are not tabled: ParseHostConfig reads them
// from the toolkit's own include/crt/host_config.h.
package compat

//go:generate go run ./internal/gen/gencompat -import ../../shared/nvidia/compat -data data -o tables_gen.go
