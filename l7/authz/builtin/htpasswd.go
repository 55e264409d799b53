package builtin

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// maxUsersFile bounds an htpasswd file.
const maxUsersFile = 1 << 20

// MaxBcryptCost is the highest bcrypt cost a users file may use: one
// comparison at cost 14 takes about a second of a core, and every wrong
// password costs one. htpasswd -B uses 5 unless told otherwise.
const MaxBcryptCost = 14

// HtpasswdFiles reads htpasswd files of bcrypt hashes ("user:$2y$..."),
// again when their size or modification time changed, looked at no more
// than once per Recheck. Any other hash (crypt, MD5, SHA-1, plain text)
// makes the whole file an error: a fast or unsalted hash is refused, not
// skipped. Only regular files of at most 1 MiB are read, opened without
// blocking: a device (/dev/zero) or a named pipe is an error at once,
// never an endless read or a wait. One file's read never holds up
// another's.
type HtpasswdFiles struct {
	// Recheck is the least time between two stats of a file.
	Recheck time.Duration
	// Now is the clock.
	Now func() time.Time

	mu    sync.Mutex
	files map[string]*htpasswd
}

type htpasswd struct {
	mu      sync.Mutex // held while the file is looked at
	checked time.Time
	size    int64
	mod     time.Time
	users   map[string][]byte
	err     error
}

// Users returns the hashes of the file at path.
func (h *HtpasswdFiles) Users(path string) (map[string][]byte, error) {
	h.mu.Lock()
	if h.files == nil {
		h.files = map[string]*htpasswd{}
	}
	f := h.files[path]
	if f == nil {
		f = &htpasswd{}
		h.files[path] = f
	}
	h.mu.Unlock()

	f.mu.Lock()
	defer f.mu.Unlock()
	now := h.Now()
	if !f.checked.IsZero() && now.Sub(f.checked) < h.Recheck {
		return f.users, f.err
	}
	f.checked = now
	st, err := os.Stat(path)
	if err != nil {
		f.users, f.err = nil, fmt.Errorf("basicAuth usersFile: %w", err)
		return nil, f.err
	}
	if f.err == nil && f.users != nil && st.Size() == f.size && st.ModTime().Equal(f.mod) {
		return f.users, nil
	}
	users, err := readHtpasswd(path)
	f.size, f.mod, f.users, f.err = st.Size(), st.ModTime(), users, err
	return users, err
}

// readHtpasswd reads and checks one file.
func readHtpasswd(path string) (map[string][]byte, error) {
	b, err := readRegular(path, maxUsersFile)
	if err != nil {
		return nil, fmt.Errorf("basicAuth usersFile %s: %w", path, err)
	}
	users := map[string][]byte{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxUsersFile)
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
		cost, err := bcrypt.Cost([]byte(hash))
		if err != nil {
			return nil, fmt.Errorf("basicAuth usersFile %s line %d (user %q): not a bcrypt hash", path, n, user)
		}
		if cost > MaxBcryptCost {
			return nil, fmt.Errorf("basicAuth usersFile %s line %d (user %q): bcrypt cost %d is above %d (each check would hold a core for seconds)", path, n, user, cost, MaxBcryptCost)
		}
		users[user] = []byte(hash)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("basicAuth usersFile %s: %w", path, err)
	}
	return users, nil
}

// readRegular reads a regular file of at most limit bytes. Anything else
// (a device, a named pipe, a socket) is refused before it is read, and
// the open does not block, so neither an endless file nor a writer that
// never comes holds the caller.
func readRegular(path string, limit int64) ([]byte, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() { // replaced between the stat and the open
		return nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}
