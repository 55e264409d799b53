package builtin

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// maxUsersFile bounds an htpasswd file.
const maxUsersFile = 1 << 20

// HtpasswdFiles reads htpasswd files of bcrypt hashes ("user:$2y$..."),
// again when their size or modification time changed, looked at no more
// than once per Recheck. Any other hash (crypt, MD5, SHA-1, plain text)
// makes the whole file an error: a fast or unsalted hash is refused, not
// skipped.
type HtpasswdFiles struct {
	// Recheck is the least time between two stats of a file.
	Recheck time.Duration
	// Now is the clock.
	Now func() time.Time

	mu    sync.Mutex
	files map[string]*htpasswd
}

type htpasswd struct {
	checked time.Time
	size    int64
	mod     time.Time
	users   map[string][]byte
	err     error
}

// Users returns the hashes of the file at path.
func (h *HtpasswdFiles) Users(path string) (map[string][]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.files == nil {
		h.files = map[string]*htpasswd{}
	}
	now := h.Now()
	f := h.files[path]
	if f != nil && now.Sub(f.checked) < h.Recheck {
		return f.users, f.err
	}
	st, err := os.Stat(path)
	if err != nil {
		h.files[path] = &htpasswd{checked: now, err: fmt.Errorf("basicAuth usersFile: %w", err)}
		return nil, h.files[path].err
	}
	if f != nil && f.err == nil && st.Size() == f.size && st.ModTime().Equal(f.mod) {
		f.checked = now
		return f.users, nil
	}
	users, err := readHtpasswd(path, st.Size())
	h.files[path] = &htpasswd{checked: now, size: st.Size(), mod: st.ModTime(), users: users, err: err}
	return users, err
}

func readHtpasswd(path string, size int64) (map[string][]byte, error) {
	if size > maxUsersFile {
		return nil, fmt.Errorf("basicAuth usersFile %s: larger than %d bytes", path, maxUsersFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("basicAuth usersFile: %w", err)
	}
	users := map[string][]byte{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		user, hash, ok := strings.Cut(line, ":")
		if !ok || user == "" {
			return nil, fmt.Errorf("basicAuth usersFile %s line %d: want user:bcrypt-hash", path, n)
		}
		if !strings.HasPrefix(hash, "$2a$") && !strings.HasPrefix(hash, "$2b$") && !strings.HasPrefix(hash, "$2y$") {
			// The line is not quoted: it may hold a plain-text password.
			return nil, fmt.Errorf("basicAuth usersFile %s line %d (user %q): only bcrypt hashes ($2y$, htpasswd -B) are accepted", path, n, user)
		}
		users[user] = []byte(hash)
	}
	return users, nil
}
