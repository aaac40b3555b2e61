package image

import (
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/cudaenv/cudaenv/internal/testwait"
)

func writeFile(t *testing.T, p, body string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func basic(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
}

func authOf(t *testing.T, k *Keychain, ref string) (*authn.AuthConfig, error) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	a, err := k.Resolve(r.Context())
	if err != nil {
		return nil, err
	}
	return a.Authorization()
}

func TestAuthFilesAreWhereDockerAndPodmanKeepThem(t *testing.T) {
	env := map[string]string{"HOME": "/h", "XDG_RUNTIME_DIR": "/run/user/1", "REGISTRY_AUTH_FILE": "/ci/auth.json"}
	got := AuthFiles(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	want := []string{"/ci/auth.json", "/h/.docker/config.json", "/run/user/1/containers/auth.json", "/h/.config/containers/auth.json"}
	if !slices.Equal(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	env = map[string]string{"HOME": "/h", "DOCKER_CONFIG": "/d", "XDG_CONFIG_HOME": "/c"}
	got = AuthFiles(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	want = []string{"/d/config.json", "/c/containers/auth.json"}
	if !slices.Equal(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

func TestCredentialsComeFromTheFirstAuthFileThatHasThem(t *testing.T) {
	dir := t.TempDir()
	podman := writeFile(t, filepath.Join(dir, "auth.json"), `{"auths": {
		"reg.example.com/team": {"auth": "`+basic("team", "t-pass")+`"},
		"reg.example.com": {"auth": "`+basic("any", "a-pass")+`"}
	}}`, 0o600)
	docker := writeFile(t, filepath.Join(dir, "config.json"), `{"auths": {
		"https://index.docker.io/v1/": {"auth": "`+basic("hubber", "h-pass")+`"},
		"https://reg.example.com/v2/": {"username": "docker", "password": "d-pass"},
		"tok.example.com": {"identitytoken": "refresh-me"}
	}}`, 0o600)
	k := &Keychain{Files: []string{podman, docker}}
	for _, tc := range []struct{ ref, user, pass, token string }{
		{"reg.example.com/team/cuda:12.4", "team", "t-pass", ""},
		{"reg.example.com/other/cuda:12.4", "any", "a-pass", ""},
		{"ubuntu:24.04", "hubber", "h-pass", ""},
		{"tok.example.com/x:1", "", "", "refresh-me"},
		{"nobody.example.com/x:1", "", "", ""},
	} {
		a, err := authOf(t, k, tc.ref)
		if err != nil {
			t.Fatalf("%s: %v", tc.ref, err)
		}
		if a.Username != tc.user || a.Password != tc.pass || a.IdentityToken != tc.token {
			t.Errorf("%s: %+v", tc.ref, a)
		}
	}
	bad := writeFile(t, filepath.Join(dir, "bad.json"), `{"auths": `, 0o600)
	if _, err := authOf(t, &Keychain{Files: []string{bad}}, "x.example.com/a:1"); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("a broken auth file: %v", err)
	}
}

func TestCredentialHelpersAreAskedWithADeadline(t *testing.T) {
	bin := t.TempDir()
	writeFile(t, filepath.Join(bin, "docker-credential-good"), "#!/bin/sh\nread server\n[ \"$server\" = reg.example.com ] && echo '{\"Username\":\"helped\",\"Secret\":\"s3cret\"}' && exit 0\necho 'credentials not found in native keychain'; exit 1\n", 0o755)
	writeFile(t, filepath.Join(bin, "docker-credential-slow"), "#!/bin/sh\nexec sleep 30\n", 0o755)
	cfg := writeFile(t, filepath.Join(t.TempDir(), "config.json"), `{"credHelpers": {"reg.example.com": "good", "other.example.com": "good", "slow.example.com": "slow"}, "credsStore": "desktop"}`, 0o600)
	// The helpers that answer get until the test's deadline (a shell
	// script starts late on a busy machine); the one that hangs, 500ms.
	k := &Keychain{Files: []string{cfg}, Env: []string{"PATH=" + bin + ":/usr/bin:/bin"}, HelperTimeout: time.Until(testwait.Limit(t))}
	a, err := authOf(t, k, "reg.example.com/x:1")
	if err != nil || a.Username != "helped" || a.Password != "s3cret" {
		t.Errorf("a helper's credentials: %+v, %v", a, err)
	}
	a, err = authOf(t, k, "other.example.com/x:1")
	if err != nil || *a != (authn.AuthConfig{}) {
		t.Errorf("a helper without them: %+v, %v", a, err)
	}
	// credsStore names Docker Desktop's helper, which this machine lacks.
	a, err = authOf(t, k, "elsewhere.example.com/x:1")
	if err != nil || *a != (authn.AuthConfig{}) {
		t.Errorf("a missing credsStore helper: %+v, %v", a, err)
	}
	// Without the deadline the helper would end after 30s having said
	// nothing, which is another error.
	slow := *k
	slow.HelperTimeout = 500 * time.Millisecond
	if _, err := authOf(t, &slow, "slow.example.com/x:1"); err == nil || !strings.Contains(err.Error(), "gave no answer within 500ms") {
		t.Errorf("a helper that hangs: %v", err)
	}
}

func TestAPushUsesTheCredentialsDockerLoginLeft(t *testing.T) {
	w := newWorld(t, nil)
	reg := newRegistry(t)
	reg.mangle = func(rw http.ResponseWriter, r *http.Request, next http.Handler) bool {
		if user, pass, ok := r.BasicAuth(); ok && user == "ci" && pass == "token" {
			return false
		}
		rw.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		rw.WriteHeader(http.StatusUnauthorized)
		return true
	}
	req := minimal12()
	req.Push = reg.host + "/team/cuda:12.4"
	if _, err := w.make(req); err == nil || !strings.Contains(err.Error(), "UNAUTHORIZED") && !strings.Contains(err.Error(), "401") {
		t.Errorf("an anonymous push to a registry that wants credentials: %v", err)
	}
	cfg := writeFile(t, filepath.Join(t.TempDir(), "config.json"), `{"auths": {"`+reg.host+`": {"auth": "`+basic("ci", "token")+`"}}}`, 0o600)
	req.Registry = &Registry{Auth: &Keychain{Files: []string{cfg}}}
	if _, err := w.make(req); err != nil {
		t.Errorf("a push with docker login's credentials: %v", err)
	}
}
