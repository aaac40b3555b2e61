package install

import (
	"net/http"
	"os"
	"testing"

	"github.com/cudaenv/cudaenv/fetch"
)

// No test reaches the internet (NVIDIA's server, pypi.org): the clients
// an Installer makes by default go through http.DefaultTransport, which
// refuses other hosts than this machine's here.
func TestMain(m *testing.M) {
	http.DefaultTransport = fetch.LoopbackOnly(http.DefaultTransport)
	os.Exit(m.Run())
}
