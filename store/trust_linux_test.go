//go:build linux

package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const nobody = 65534 // an ordinary user other than the one testing

// asRoot skips a test that needs to give files to another user.
func asRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give files to another user")
	}
}

func chownR(t *testing.T, p string, uid int) {
	t.Helper()
	err := filepath.Walk(p, func(q string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(q, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// nvccToolkit is a toolkit that names its release only through bin/nvcc,
// which link would run to ask: it leaves ran behind when it runs.
func nvccToolkit(t *testing.T, dir string) (ran string) {
	t.Helper()
	ran = filepath.Join(filepath.Dir(dir), "nvcc-ran")
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ntouch '" + ran + "'\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "nvcc"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return ran
}

func TestLinkSystemRefusesATreeAnotherUserCouldChange(t *testing.T) {
	asRoot(t)
	for _, tc := range []struct {
		name string
		make func(t *testing.T, target string)
		says string
	}{
		{"a tree another user owns", func(t *testing.T, target string) { chownR(t, target, nobody) },
			"is owned by nobody (uid 65534), not by root or the system store's owner"},
		{"a tree whose bin another user owns", func(t *testing.T, target string) { chownR(t, filepath.Join(target, "bin"), nobody) },
			"/bin is owned by nobody"},
		{"a tree whose nvcc others may write", func(t *testing.T, target string) { chmod(t, filepath.Join(target, "bin", "nvcc"), 0o777) },
			"/bin/nvcc is writable by others (mode -rwxrwxrwx)"},
		{"a tree its group may write", func(t *testing.T, target string) { chmod(t, target, 0o775) },
			"is writable by its group (mode drwxrwxr-x)"},
		{"a tree under a folder another user owns", func(t *testing.T, target string) { os.Lchown(filepath.Dir(target), nobody, nobody) },
			", a folder above it, is owned by nobody"},
		{"a tree with a link to a file another user owns", func(t *testing.T, target string) {
			out := filepath.Join(filepath.Dir(filepath.Dir(target)), "theirs")
			os.WriteFile(out, []byte("#!/bin/sh\n"), 0o755)
			os.Lchown(out, nobody, nobody)
			os.Symlink(out, filepath.Join(target, "bin", "ptxas"))
		}, "/bin/ptxas leads, is owned by nobody"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, admin := layered(t)
			target := filepath.Join(t.TempDir(), "home", "cuda-12.4")
			ran := nvccToolkit(t, target)
			tc.make(t, target)
			_, err := admin.Link(target, 0)
			if err == nil {
				t.Fatal("linked")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "link --system ") || !strings.Contains(msg, tc.says) || !strings.Contains(msg, "go-w") {
				t.Errorf("error %q: want %q and how to fix it", msg, tc.says)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("link ran the tree's bin/nvcc before refusing it")
			}
			if _, err := os.Stat(admin.Dirs.CUDA()); !os.IsNotExist(err) {
				t.Errorf("the system store changed: %v", err)
			}
		})
	}
}

func TestLinkSystemTakesATreeOfRootOrTheStoresOwner(t *testing.T) {
	asRoot(t)
	t.Run("root's", func(t *testing.T) {
		_, admin := layered(t)
		target := filepath.Join(t.TempDir(), "cuda-12.4")
		fakeToolkit(t, target, "12.4.1")
		if _, err := admin.Link(target, 0); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the store's owner's, an ordinary user", func(t *testing.T) {
		_, admin := layered(t)
		os.MkdirAll(admin.Dirs.Root, 0o755)
		chownR(t, admin.Dirs.Root, nobody)
		target := filepath.Join(t.TempDir(), "cuda-12.4")
		fakeToolkit(t, target, "12.4.1")
		chownR(t, target, nobody)
		if _, err := admin.Link(target, 0); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a user's own link, whoever owns the tree", func(t *testing.T) {
		user, _ := layered(t)
		target := filepath.Join(t.TempDir(), "cuda-12.4")
		fakeToolkit(t, target, "12.4.1")
		chownR(t, target, nobody)
		chmod(t, target, 0o777)
		if _, err := user.Link(target, 0); err != nil {
			t.Fatal(err)
		}
	})
}

func TestUsersSkipSystemEntriesAnotherUserCouldChange(t *testing.T) {
	asRoot(t)
	for _, tc := range []struct {
		name string
		make func(t *testing.T, admin *Store) // spoils 12.6.3 (or all)
		says string
		left string // what List still shows
	}{
		{"an entry another user owns", func(t *testing.T, admin *Store) {
			chownR(t, filepath.Join(admin.Dirs.CUDA(), "12.6.3"), nobody)
		}, "skipping the system store's 12.6.3: %s/cuda/12.6.3 is owned by nobody (uid 65534)", "12.4.1(system)"},
		{"a receipt others may write", func(t *testing.T, admin *Store) {
			chmod(t, filepath.Join(admin.Dirs.CUDA(), "12.6.3", ReceiptName), 0o666)
		}, "%s/cuda/12.6.3/receipt.json is writable by others", "12.4.1(system)"},
		{"an entry planted in a cuda folder others may write", func(t *testing.T, admin *Store) {
			chmod(t, admin.Dirs.CUDA(), 0o777)
		}, "skipping the system store's cuda folder: %s/cuda is writable by others (mode drwxrwxrwx)", ""},
		{"a store folder others may write", func(t *testing.T, admin *Store) {
			chmod(t, admin.Dirs.Root, 0o777)
		}, "skipping the system store's folder: %s is writable by others", ""},
		{"a link to a tree another user owns", func(t *testing.T, admin *Store) {
			os.RemoveAll(filepath.Join(admin.Dirs.CUDA(), "12.6.3"))
			target := filepath.Join(filepath.Dir(admin.Dirs.Root), "cuda-12.6")
			fakeToolkit(t, target, "12.6.3")
			if _, err := admin.Link(target, 0); err != nil {
				t.Fatal(err)
			}
			chownR(t, target, nobody)
		}, "skipping the system store's 12.6.3: %s/cuda-12.6 is owned by nobody", "12.4.1(system)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user, admin := layered(t)
			install(t, admin, CUDA, "12.4.1")
			install(t, admin, CUDA, "12.6.3")
			tc.make(t, admin)
			var warned []string
			user.Warn = func(w string) { warned = append(warned, w) }
			for i := 0; i < 2; i++ {
				list, err := user.List(CUDA)
				if err != nil {
					t.Fatal(err)
				}
				if got := labels(list); got != tc.left {
					t.Errorf("List = %q, want %q", got, tc.left)
				}
				if e, ok := user.Get(CUDA, "12.6.3"); ok {
					t.Errorf("Get(12.6.3) = %+v", e)
				}
			}
			base := admin.Dirs.Root
			if strings.Contains(tc.says, "cuda-12.6") {
				base = filepath.Dir(base)
			}
			want := strings.Replace(tc.says, "%s", base, 1)
			if len(warned) != 1 || !strings.Contains(warned[0], want) || !strings.Contains(warned[0], "ask the store's admin to fix its permissions") {
				t.Errorf("warnings %q, want one with %q", warned, want)
			}
		})
	}
}

func TestUsersTrustSystemEntriesOfTheStoresOwner(t *testing.T) {
	asRoot(t)
	user, admin := layered(t)
	install(t, admin, CUDA, "12.4.1")
	chownR(t, admin.Dirs.Root, nobody) // the admin is an ordinary user
	user.Warn = func(w string) { t.Errorf("warned: %s", w) }
	if list, _ := user.List(CUDA); labels(list) != "12.4.1(system)" {
		t.Errorf("List = %s", labels(list))
	}
}
