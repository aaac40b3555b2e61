package fetch

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// ErrNotLoopback is wrapped by the error of a request that LoopbackOnly
// refused. It is never retried and does not count as unreachable, so that
// a test that strays shows as a failure, not as a fallback.
var ErrNotLoopback = errors.New("refused: tests reach this machine's hosts only")

// LoopbackOnly wraps rt so that it refuses every request (redirects
// included) to a host that is not this machine's: localhost, 127.0.0.0/8,
// ::1. The TestMain of every package whose tests make clients sets
// http.DefaultTransport to it, so that no code path reaches the internet
// (NVIDIA's server, pypi.org) by a default a test forgot to replace; the
// clients fetch and fetch/pypi make by default go through
// http.DefaultTransport.
func LoopbackOnly(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return loopbackOnly{rt}
}

type loopbackOnly struct{ rt http.RoundTripper }

func (l loopbackOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if !isLoopback(r.URL.Hostname()) {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, fmt.Errorf("%s: %w", r.URL.Host, ErrNotLoopback)
	}
	return l.rt.RoundTrip(r)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
