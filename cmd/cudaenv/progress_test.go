package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// frames splits what the bar wrote into the frames a terminal showed.
func frames(s string) []string {
	var out []string
	for _, f := range regexp.MustCompile(`[\r\n]|\x1b\[K`).Split(s, -1) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// The bar downloads with a rate and an ETA, then unpacks over the
// components with neither; bytes already present never count as
// downloaded (issue #36: 95 % with "1s" left for 25 s while wheels
// unpack; "665 GB/s" for bytes that were there).
func TestProgressHasAnUnpackingPhaseAndNoRateForBytesAlreadyPresent(t *testing.T) {
	var b strings.Builder
	p := &progress{w: &b, label: "CUDA 13.0.3", isTerm: true}
	p.Start(3000, 3)
	p.Cached(1000) // an archive from the cache
	p.Add(1000)
	time.Sleep(150 * time.Millisecond) // past the bar's throttle, so it draws
	p.Add(1000)                        // every byte in; nothing unpacked yet
	p.Unpacking("libcublas")
	p.ComponentDone("cuda_nvcc")
	time.Sleep(150 * time.Millisecond)
	p.ComponentDone("libcublas")
	p.ComponentDone("cuda_cudart")
	p.Finish()
	fs := frames(b.String())
	var unpack []string
	for _, f := range fs {
		if strings.Contains(f, "unpacking") || unpack != nil {
			unpack = append(unpack, f)
		}
	}
	if len(unpack) == 0 || !strings.HasPrefix(unpack[0], "CUDA 13.0.3 [0/3] unpacking libcublas") {
		t.Fatalf("no unpacking phase named libcublas:\n%s", strings.Join(fs, "\n"))
	}
	for _, f := range unpack {
		if strings.Contains(f, "B/s") || regexp.MustCompile(`\[\d+s`).MatchString(f) {
			t.Errorf("the unpacking phase shows a rate or a time: %q", f)
		}
	}
	if last := fs[len(fs)-1]; !regexp.MustCompile(`^CUDA 13\.0\.3 \[3/3\] 100% \|█+\|$`).MatchString(last) {
		t.Errorf("last frame %q", last)
	}
	for _, f := range fs {
		if regexp.MustCompile(`[0-9.]+ [GT]B/s`).MatchString(f) {
			t.Errorf("a rate of gigabytes a second: %q", f)
		}
	}

	// Everything present: no download phase to speak of, and no rate at
	// all.
	b.Reset()
	p = &progress{w: &b, label: "cuDNN 9.19.0.56-cuda13", isTerm: true}
	p.Start(5000, 1)
	p.Cached(5000)
	p.ComponentDone("cudnn")
	p.Finish()
	fs = frames(b.String())
	if strings.Contains(b.String(), "B/s") || fs[len(fs)-1] != "cuDNN 9.19.0.56-cuda13 [1/1] 100% |"+strings.Repeat("█", 40)+"|" {
		t.Errorf("all present:\n%s", strings.Join(fs, "\n"))
	}
}
