package fetch_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"testing"

	"github.com/cudaenv/cudaenv/fetch"
	"github.com/cudaenv/cudaenv/fetch/fetchtest"
)

func TestObtainKeepsVerifiedArchivesWithoutExtracting(t *testing.T) {
	m := newMirror(t, fetchtest.Options{})
	c := newClient(t, m)
	arts := minimal124(t, c)
	prog := &countingProgress{}
	c.Progress = prog
	paths, err := c.Obtain(t.Context(), arts)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arts {
		data, err := os.ReadFile(paths[a.SHA256])
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != a.SHA256 {
			t.Errorf("%s: the kept archive does not hash to the manifest's sha256", a.Component)
		}
	}
	if len(prog.comps) != len(arts) || prog.done != 1 {
		t.Errorf("progress: %d components done, finished %d times", len(prog.comps), prog.done)
	}

	// Again, offline: from the cache, without a request.
	m.ResetCounts()
	c.Offline = true
	if _, err := c.Obtain(t.Context(), arts); err != nil {
		t.Fatal(err)
	}
	if len(m.Requests()) != 0 {
		t.Errorf("requests: %v", m.Requests())
	}

	// An archive that does not match its manifest is refused, as in
	// Fetch, and not kept.
	m.SetFault("cuda_nvcc", fetchtest.Fault{Truncate: 100})
	c2 := newClient(t, m)
	c2.Retries = -1
	_, err = c2.Obtain(t.Context(), arts)
	if err == nil {
		t.Fatal("a truncated archive was kept")
	}
	for _, a := range arts {
		if _, serr := os.Stat(c2.CacheDir + "/archives/" + a.SHA256); a.Component == "cuda_nvcc" && serr == nil {
			t.Error("the truncated archive is in the cache")
		}
	}
	if errors.Is(err, fetch.ErrOffline) {
		t.Errorf("err = %v", err)
	}
}
