// Command image serves go-containerregistry's registry on this machine
// for the image benchmark (run.sh): it prints host:port, then serves until
// it is killed.
//
//	image serve
package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	if len(os.Args) != 2 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: image serve")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	log.Fatal(http.Serve(ln, registry.New(registry.Logger(log.New(io.Discard, "", 0)))))
}
