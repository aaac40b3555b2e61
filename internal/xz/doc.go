// Package xz implements XZ decompression natively in Go: it is the
// decoder cudaenv's fetch extracts .tar.xz archives with, one Reader (and
// so one dictionary) per extraction worker, reused through Reset.
//
// It is a fork of github.com/mikelolasagasti/xz v1.0.1 (itself a copy of
// github.com/xi2/xz), public domain / 0BSD as upstream (see LICENSE and
// NOTICE). Only the LZMA decoder's hot loop differs (lzmaMain, dictCopy):
// it decodes about 1.5 times as fast as upstream, level with liblzma, and
// byte for byte as upstream does; diff_test.go checks that against
// upstream and `xz -dc`, on valid, corrupt and fuzzed (FuzzDecode) input.
//
// # Usage
//
// For ease of use, this package is designed to have a similar API to
// compress/gzip. See the examples for further details.
//
// # Implementation
//
// This package is a translation from C to Go of XZ Embedded
// (http://tukaani.org/xz/embedded.html) with enhancements made so as
// to implement all mandatory and optional parts of the XZ file format
// specification v1.0.4. It supports all filters and block check
// types, supports multiple streams, and performs index verification
// using SHA-256 as recommended by the specification.
//
// # Speed
//
// On the author's Intel Ivybridge i5, upstream's decompression speed is
// about half that of the standard XZ Utils (tested with a recent linux
// kernel tarball). This fork's is about the same as XZ Utils' on
// archives of shared libraries (see BENCHMARKS.md; measure with
// `go run ./bench/xz -file F.xz`).
//
// # Thanks
//
// Thanks are due to Lasse Collin and Igor Pavlov, the authors of XZ
// Embedded, on whose code package xz is based. It would not exist
// without their decision to allow others to modify and reuse their
// code.
//
// # Bug reports
//
// Bugs in this fork belong to cudaenv, not to upstream or the authors of
// XZ Embedded.
package xz
