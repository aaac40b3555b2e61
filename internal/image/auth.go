package image

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// Keychain finds registry credentials where Docker and Podman keep them:
// the auth files' "auths" entries, and the credential helpers they name
// ("credHelpers", "credsStore"), as docker login and podman login leave
// them.
type Keychain struct {
	// Files are the auth files in the order they are asked; the first
	// that has an entry for a registry decides.
	Files []string
	// Env is the environment a credential helper runs with (PATH finds it).
	Env []string
	// HelperTimeout bounds a credential helper's run; 0 means 30s.
	HelperTimeout time.Duration
}

// AuthFiles are the auth files Docker and Podman read, in the order cudaenv
// asks them, from an environment: REGISTRY_AUTH_FILE (Podman's and
// skopeo's explicit choice), $DOCKER_CONFIG/config.json or
// ~/.docker/config.json, then Podman's $XDG_RUNTIME_DIR/containers/auth.json
// and ~/.config/containers/auth.json.
func AuthFiles(lookup func(string) (string, bool)) []string {
	get := func(k string) string { v, _ := lookup(k); return v }
	var out []string
	if f := get("REGISTRY_AUTH_FILE"); f != "" {
		out = append(out, f)
	}
	home := get("HOME")
	if d := get("DOCKER_CONFIG"); d != "" {
		out = append(out, filepath.Join(d, "config.json"))
	} else if home != "" {
		out = append(out, filepath.Join(home, ".docker", "config.json"))
	}
	if d := get("XDG_RUNTIME_DIR"); d != "" {
		out = append(out, filepath.Join(d, "containers", "auth.json"))
	}
	cfg := get("XDG_CONFIG_HOME")
	if cfg == "" && home != "" {
		cfg = filepath.Join(home, ".config")
	}
	if cfg != "" {
		out = append(out, filepath.Join(cfg, "containers", "auth.json"))
	}
	return out
}

// maxAuthFile bounds an auth file.
const maxAuthFile = 1 << 20

// authFile is the part of Docker's config.json and Podman's auth.json
// that holds credentials.
type authFile struct {
	Auths       map[string]authEntry `json:"auths"`
	CredsStore  string               `json:"credsStore"`
	CredHelpers map[string]string    `json:"credHelpers"`
}

type authEntry struct {
	Auth          string `json:"auth"`
	Username      string `json:"username"`
	Password      string `json:"password"`
	IdentityToken string `json:"identitytoken"`
	RegistryToken string `json:"registrytoken"`
}

// dockerHub is the key Docker keeps Docker Hub's credentials under.
const dockerHub = "https://index.docker.io/v1/"

// Resolve returns the credentials for a repository: the first auth file
// with an entry for its registry (an entry for the repository or a
// namespace of it first, as Podman keeps them), through the credential
// helper the file names for it if any; anonymous when none has one.
func (k *Keychain) Resolve(repo name.Repository) (authn.Authenticator, error) {
	reg := repo.RegistryStr()
	for _, p := range k.Files {
		f, err := readAuthFile(p)
		if err != nil {
			return nil, err
		}
		if f == nil {
			continue
		}
		if helper := f.CredHelpers[reg]; helper != "" {
			return k.helper(helper, reg)
		}
		if e, ok := f.lookup(repo); ok {
			return e.authenticator(p, reg)
		}
		if f.CredsStore != "" {
			if _, found := lookPath("docker-credential-"+f.CredsStore, k.Env); !found {
				// Docker Desktop's store on a machine without it: the
				// registries it would know are asked anonymously.
				continue
			}
			a, err := k.helper(f.CredsStore, reg)
			if err != nil || a != authn.Anonymous {
				return a, err
			}
		}
	}
	return authn.Anonymous, nil
}

func readAuthFile(p string) (*authFile, error) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("registry credentials: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxAuthFile {
		return nil, fmt.Errorf("registry credentials: %s is not an auth file (a plain file under 1 MiB)", p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("registry credentials: %w", err)
	}
	var f authFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("registry credentials: %s: %w", p, err)
	}
	return &f, nil
}

// lookup finds the entry for a repository: keyed by the repository, a
// namespace of it or the registry, with or without a scheme and /v1/ or
// /v2/ after it (as docker login and older clients wrote them).
func (f *authFile) lookup(repo name.Repository) (authEntry, bool) {
	reg := repo.RegistryStr()
	want := []string{}
	for p := reg + "/" + repo.RepositoryStr(); p != reg; p = p[:strings.LastIndexByte(p, '/')] {
		want = append(want, p)
	}
	want = append(want, reg)
	byKey := map[string]authEntry{}
	for k, e := range f.Auths {
		key := k
		if k == dockerHub {
			key = name.DefaultRegistry
		}
		key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
		key = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(key, "/"), "/v1"), "/v2")
		if key == "docker.io" || key == "registry-1.docker.io" {
			key = name.DefaultRegistry
		}
		byKey[key] = e
	}
	for _, w := range want {
		if e, ok := byKey[w]; ok {
			return e, true
		}
	}
	return authEntry{}, false
}

func (e authEntry) authenticator(file, reg string) (authn.Authenticator, error) {
	cfg := authn.AuthConfig{Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken}
	if e.Auth != "" {
		raw, err := base64.StdEncoding.DecodeString(e.Auth)
		user, pass, ok := strings.Cut(string(raw), ":")
		if err != nil || !ok {
			return nil, fmt.Errorf("registry credentials: %s: the entry for %s is not base64 of user:password", file, reg)
		}
		cfg.Username, cfg.Password = user, pass
	}
	if cfg == (authn.AuthConfig{}) {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(cfg), nil
}

var helperName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// helper asks docker-credential-<name> for a registry's credentials.
func (k *Keychain) helper(helper, reg string) (authn.Authenticator, error) {
	if !helperName.MatchString(helper) {
		return nil, fmt.Errorf("registry credentials: %q is not a credential helper's name", helper)
	}
	timeout := k.HelperTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	server := reg
	if reg == name.DefaultRegistry {
		server = dockerHub
	}
	bin := "docker-credential-" + helper
	if p, ok := lookPath(bin, k.Env); ok {
		bin = p
	}
	cmd := exec.CommandContext(ctx, bin, "get")
	cmd.Env = k.Env
	cmd.Stdin = strings.NewReader(server)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limited{w: &out, n: maxAuthFile}, &limited{w: &errb, n: 4096}
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String() + " " + out.String())
		if strings.Contains(msg, "credentials not found") {
			return authn.Anonymous, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("registry credentials: %s gave no answer within %s", bin, timeout)
		}
		return nil, fmt.Errorf("registry credentials: %s get: %v %s", filepath.Base(bin), err, firstLine(msg))
	}
	var c struct{ Username, Secret string }
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		return nil, fmt.Errorf("registry credentials: %s get: %w", filepath.Base(bin), err)
	}
	if c.Username == "<token>" {
		return authn.FromConfig(authn.AuthConfig{IdentityToken: c.Secret}), nil
	}
	return authn.FromConfig(authn.AuthConfig{Username: c.Username, Password: c.Secret}), nil
}

// lookPath finds a program on the PATH of env.
func lookPath(file string, env []string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			for _, dir := range filepath.SplitList(v) {
				if dir == "" || !filepath.IsAbs(dir) {
					continue
				}
				p := filepath.Join(dir, file)
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					return p, true
				}
			}
			return "", false
		}
	}
	return "", false
}

// limited keeps the first n bytes written to it.
type limited struct {
	w io.Writer
	n int64
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(int64(len(p)), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
