// Command cudaenv installs CUDA toolkits and cuDNN side by side and switches
// between them per shell and per project directory.
package main

import "os"

func main() {
	os.Exit(run(os.Args, os.Environ(), os.Stdin, os.Stdout, os.Stderr))
}
