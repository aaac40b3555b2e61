package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudaenv/cudaenv/internal/dirs"
)

// layered is a user store with a system store beside it; the system
// store is filled by its admin (NewSystem).
func layered(t *testing.T) (user, admin *Store) {
	base := t.TempDir()
	d := dirs.Dirs{
		Root:   filepath.Join(base, `user "$x"`),
		Config: filepath.Join(base, "cfg"),
		Cache:  filepath.Join(base, "cache"),
		System: filepath.Join(base, `sys tem`),
	}
	admin, err := NewSystem(d)
	if err != nil {
		t.Fatal(err)
	}
	return New(d), admin
}

func install(t *testing.T, s *Store, k Kind, name string) Entry {
	t.Helper()
	e, err := s.Install(k, name, func(stage string) (Receipt, error) {
		return Receipt{Source: "nvidia"}, os.MkdirAll(filepath.Join(stage, "bin"), 0o755)
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func labels(list []Entry) string {
	var out []string
	for _, e := range list {
		s := e.Name
		if e.System {
			s += "(system)"
		}
		if e.Shadows {
			s += "(shadows)"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestAUserSeesTheSystemStoresVersionsBesideTheirOwn(t *testing.T) {
	user, admin := layered(t)
	install(t, admin, CUDA, "11.8.0")
	install(t, admin, CUDA, "12.4.1")
	install(t, admin, Cudnn, "9.5.1.17-cuda12")
	install(t, user, CUDA, "12.4.1")
	install(t, user, CUDA, "12.6.3")

	list, err := user.List(CUDA)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := labels(list), "11.8.0(system) 12.4.1(shadows) 12.6.3"; got != want {
		t.Errorf("List = %s, want %s", got, want)
	}
	if list[1].Dir != filepath.Join(user.Dirs.CUDA(), "12.4.1") {
		t.Errorf("the shadowing entry is %s, want the user's", list[1].Dir)
	}
	cudnn, _ := user.List(Cudnn)
	if got := labels(cudnn); got != "9.5.1.17-cuda12(system)" {
		t.Errorf("List(cudnn) = %s", got)
	}
	if e, ok := user.Get(CUDA, "11.8.0"); !ok || !e.System || e.Dir != filepath.Join(admin.Dirs.CUDA(), "11.8.0") {
		t.Errorf("Get(11.8.0) = %+v, %v", e, ok)
	}
	if e, ok := user.Get(CUDA, "12.4.1"); !ok || e.System || !e.Shadows {
		t.Errorf("Get(12.4.1) = %+v, %v", e, ok)
	}
	if _, ok := user.GetOwn(CUDA, "11.8.0"); ok {
		t.Error("GetOwn found the system store's entry")
	}
	if list, _ := admin.List(CUDA); labels(list) != "11.8.0 12.4.1" {
		t.Errorf("the admin's view of the system store = %s", labels(list))
	}
}

func TestAStoreWhoseSystemRootIsItsOwnRootHasNoSecondLayer(t *testing.T) {
	root := t.TempDir()
	s := New(dirs.Dirs{Root: root, System: root + "/"})
	if s.System != nil {
		t.Error("the store reads itself twice")
	}
}

func TestAUserCannotUninstallASystemEntry(t *testing.T) {
	user, admin := layered(t)
	install(t, admin, CUDA, "12.4.1")
	e, _ := user.Get(CUDA, "12.4.1")
	err := user.Remove(e)
	if err == nil || !strings.Contains(err.Error(), "only its admin changes (cudaenv uninstall --system)") {
		t.Fatalf("Remove = %v", err)
	}
	if _, ok := admin.Get(CUDA, "12.4.1"); !ok {
		t.Fatal("the system entry is gone")
	}
	sys, _ := admin.Get(CUDA, "12.4.1")
	if err := admin.Remove(sys); err != nil {
		t.Fatalf("the admin's Remove: %v", err)
	}
}

func TestAUserLinkOrInstallShadowsTheSystemEntryInsteadOfFailing(t *testing.T) {
	user, admin := layered(t)
	install(t, admin, CUDA, "12.4.1")
	target := filepath.Join(t.TempDir(), "cuda-12.4")
	fakeToolkit(t, target, "12.4.1")
	e, err := user.Link(target, 0)
	if err != nil {
		t.Fatalf("Link: %v", err)
	}
	if e.System || !e.Shadows || e.Path != target {
		t.Errorf("linked entry = %+v", e)
	}
}

func TestNewSystemWithoutASystemRootSaysHowToSetOne(t *testing.T) {
	_, err := NewSystem(dirs.Dirs{Root: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "CUDAENV_SYSTEM_ROOT") {
		t.Fatalf("err = %v", err)
	}
}
