// Command resolvebench is the byte counter of bench/resolve/run.sh: an
// HTTP CONNECT proxy on the loopback that tunnels to the real index and
// counts the bytes that cross it both ways (TLS records, as on the wire),
// so cudaenv and uv are measured the same way whatever each reports.
//
//	resolvebench proxy -port-file F -count-file C
//
// It writes its port to F, serves until SIGTERM or SIGINT, then writes
// "<bytes down> <bytes up>" to C and exits.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "proxy" {
		fmt.Fprintln(os.Stderr, "usage: resolvebench proxy -port-file F -count-file C")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("proxy", flag.ExitOnError)
	portFile := fs.String("port-file", "", "where to write the port")
	countFile := fs.String("count-file", "", "where to write the byte counts at the end")
	fs.Parse(os.Args[2:])
	if err := run(*portFile, *countFile); err != nil {
		fmt.Fprintln(os.Stderr, "resolvebench:", err)
		os.Exit(1)
	}
}

type counter struct{ down, up atomic.Int64 }

func run(portFile, countFile string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var c counter
	var wg sync.WaitGroup
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		wg.Add(1)
		defer wg.Done()
		up, err := net.DialTimeout("tcp", r.Host, 10*time.Second)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer up.Close()
		hj, ok := w.(http.Hijacker)
		if !ok {
			http.Error(w, "no hijack", http.StatusInternalServerError)
			return
		}
		client, buf, err := hj.Hijack()
		if err != nil {
			return
		}
		defer client.Close()
		if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
			return
		}
		done := make(chan struct{}, 2)
		go func() { n, _ := io.Copy(up, buf); c.up.Add(n); done <- struct{}{} }()
		go func() { n, _ := io.Copy(client, up); c.down.Add(n); done <- struct{}{} }()
		<-done
	})}
	go srv.Serve(ln)
	if err := os.WriteFile(portFile, []byte(fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)), 0o644); err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	srv.Close()
	return os.WriteFile(countFile, []byte(fmt.Sprintf("%d %d\n", c.down.Load(), c.up.Load())), 0o644)
}
