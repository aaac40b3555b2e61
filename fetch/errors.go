package fetch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// TimeoutError is a transfer given up because the server was too slow: no
// response headers in time, no data for too long, below the speed floor,
// or not done in time. It counts as the server being unreachable.
type TimeoutError struct {
	Reason string // e.g. "no response headers within 30s"
}

func (e *TimeoutError) Error() string {
	if e.Reason == "" {
		return "timed out"
	}
	return e.Reason
}

// Timeout and Temporary make it a net.Error, as transport timeouts are.
func (e *TimeoutError) Timeout() bool   { return true }
func (e *TimeoutError) Temporary() bool { return true }

// LocalError is a failure of this machine, not of the network: a full
// disk, a read-only file system, no permission. Its message ends with what
// to do about it. It is never retried and never counts as unreachable.
type LocalError struct {
	Err  error  // what failed, with its path
	Hint string // what to do
}

func (e *LocalError) Error() string { return e.Err.Error() + "; " + e.Hint }
func (e *LocalError) Unwrap() error { return e.Err }

// Where a local write failed decides the hint.
const (
	inCache = "cache"
	inDest  = "dest"
)

// localize turns err into a *LocalError when it is a full disk, a
// read-only file system or a permission problem; other errors are
// returned as they are.
func localize(err error, where string) error {
	var le *LocalError
	if err == nil || errors.As(err, &le) {
		return err
	}
	env, full := "CUDAENV_CACHE_DIR", "free space, or drop cached downloads with: cudaenv cache prune"
	if where == inDest {
		env = "CUDAENV_ROOT"
		full = "free space, e.g. drop cached downloads (cudaenv cache prune) or versions you no longer use (cudaenv uninstall)"
	}
	// The error's own text already says which: "no space left on device".
	switch {
	case isNoSpace(err):
		return &LocalError{err, full}
	case isReadOnly(err):
		return &LocalError{err, "set " + env + " to a folder on a writable file system"}
	case errors.Is(err, fs.ErrPermission):
		return &LocalError{err, "fix the folder's permissions, or set " + env + " to a folder you can write"}
	}
	return err
}

// Unreachable reports whether err means the server could not be reached
// or did not answer in time (no such host, refused or reset connections,
// timeouts), as opposed to answering with an error (404, a bad checksum),
// a failure of this machine (*LocalError, or any file-system error) or a
// missing cache entry (ErrOffline). Callers use it to decide whether
// another source is worth trying.
func Unreachable(err error) bool {
	if err == nil || errors.Is(err, ErrOffline) || errors.Is(err, context.Canceled) || errors.Is(err, ErrNotLoopback) {
		return false
	}
	var le *LocalError
	var pe *fs.PathError
	if errors.As(err, &le) || errors.As(err, &pe) {
		return false
	}
	var se *statusError
	var fe *fatalError
	if errors.As(err, &se) || errors.As(err, &fe) {
		return false
	}
	var te *TimeoutError
	var dns *net.DNSError
	var oe *net.OpError
	var ue *url.Error
	return errors.As(err, &te) || errors.As(err, &dns) || errors.As(err, &oe) || errors.As(err, &ue) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH)
}

// userinfoRE finds the user information of URLs in any text.
var userinfoRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s"'<>]*@`) })

// Redact masks the credentials of every URL in s, for messages and files:
// in user:password@ the password becomes xxxxx, and a user name alone
// (often a token) becomes xxxxx. Everything else is left as it is.
func Redact(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return userinfoRE().ReplaceAllStringFunc(s, func(m string) string {
		scheme, info, _ := strings.Cut(m, "://")
		info = strings.TrimSuffix(info, "@")
		if user, _, ok := strings.Cut(info, ":"); ok {
			return scheme + "://" + user + ":xxxxx@"
		}
		return scheme + "://xxxxx@"
	})
}

// RedactError returns err with the credentials of any URL in its message
// masked (see Redact); errors.Is and errors.As still see the original.
func RedactError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if r := Redact(msg); r != msg {
		return &redactedError{msg: r, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// seconds renders a limit the way users write it: 30s, 100ms.
func seconds(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// NetError is a request that got no answer from its host: said once, as
// "cannot reach HOST: CAUSE", without the URL twice over that net/http
// puts in its errors. It unwraps to the transport's error.
type NetError struct {
	Host string
	Err  error
}

func (e *NetError) Error() string { return "cannot reach " + Redact(e.Host) + ": " + netCause(e.Err) }
func (e *NetError) Unwrap() error { return e.Err }

// netCause is the part of a transport error a user can act on.
func netCause(err error) string {
	var te *TimeoutError
	var dns *net.DNSError
	switch {
	case errors.As(err, &te):
		return te.Error()
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return "no such host"
		}
		return "name lookup failed: " + dns.Err
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to the host"
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
