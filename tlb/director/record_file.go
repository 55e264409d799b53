package director

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/tlbproject/tlb/internal/filecap"
	"github.com/tlbproject/tlb/tlb/model"
)

// RecordDirMode is the mode OpenRecord enforces on the runtime directory:
// the record says which IPVS services the director may delete, so only
// its owner may write there.
const RecordDirMode fs.FileMode = 0o700

// MaxRecordSize caps the ownership record. A key takes about 30 bytes, so
// 16 MiB is half a million services, far more than a config file holds
// (see config.MaxFileSize); a larger record is unreadable (moved aside).
const MaxRecordSize = 16 << 20

// recordTempPattern names the temporary files save writes before the
// rename; any left at start are from a crash and are removed.
const recordTempPattern = RecordFile + ".tmp*"

// RecordRecovery says what OpenRecord repaired on disk, for the caller to
// log and count.
type RecordRecovery struct {
	// CorruptErr is why the record could not be read; nil when it could.
	CorruptErr error
	// MovedTo is where the unreadable record was moved
	// (<RecordFile>.corrupt-<UTC time>); "" when nothing was moved.
	MovedTo string
	// StaleTemps are the temporary files from an interrupted write that
	// were removed.
	StaleTemps []string
	// ModeFixed is true when the directory's mode was changed to
	// RecordDirMode.
	ModeFixed bool
}

// OpenRecord is the director's LoadRecord: it creates dir with
// RecordDirMode (or chmods an existing one to it), removes stale
// temporary files and reads the record. An unreadable record (empty,
// truncated, corrupt, over MaxRecordSize) does not stop the director: it is moved aside to
// <RecordFile>.corrupt-<now in UTC> and the record starts empty, so that
// the director adopts only the services in its model and leaves every
// other IPVS service alone. Errors are returned only when the directory
// or the file cannot be handled at all. dir "" keeps the record in memory.
func OpenRecord(dir string, now func() time.Time) (*Record, RecordRecovery, error) {
	var rec RecordRecovery
	r := &Record{owned: map[model.Key]bool{}}
	if dir == "" {
		return r, rec, nil
	}
	r.path = filepath.Join(dir, RecordFile)
	fixed, err := ensureRecordDir(dir)
	if err != nil {
		return nil, rec, err
	}
	rec.ModeFixed = fixed
	if rec.StaleTemps, err = removeStaleTemps(dir); err != nil {
		return nil, rec, err
	}
	data, err := filecap.Read(r.path, MaxRecordSize)
	if errors.Is(err, fs.ErrNotExist) {
		return r, rec, nil
	}
	if err != nil && !filecap.IsTooLarge(err) {
		return nil, rec, fmt.Errorf("read ownership record %s: %w", r.path, err)
	}
	var owned map[model.Key]bool
	if err == nil {
		owned, err = parseRecord(r.path, data)
	}
	if err == nil {
		r.owned = owned
		return r, rec, nil
	}
	rec.CorruptErr = err
	rec.MovedTo = r.path + ".corrupt-" + now().UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(r.path, rec.MovedTo); err != nil {
		return nil, rec, fmt.Errorf("move unreadable ownership record %s aside: %w", r.path, err)
	}
	if err := syncDir(dir); err != nil {
		return nil, rec, err
	}
	return r, rec, nil
}

// ensureRecordDir creates dir with RecordDirMode, or sets that mode on an
// existing directory; it reports whether it had to change the mode. It
// refuses a shared (sticky) directory such as /tmp rather than chmod it.
func ensureRecordDir(dir string) (bool, error) {
	if err := os.MkdirAll(dir, RecordDirMode); err != nil {
		return false, fmt.Errorf("create runtime directory %s: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return false, fmt.Errorf("stat runtime directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("runtime directory %s: not a directory", dir)
	}
	if fi.Mode().Perm() == RecordDirMode {
		return false, nil
	}
	if fi.Mode()&fs.ModeSticky != 0 {
		// A shared directory such as /tmp: never chmod it.
		return false, fmt.Errorf("runtime directory %s: shared (sticky bit, mode %o); give the director a directory of its own", dir, fi.Mode().Perm())
	}
	if err := os.Chmod(dir, RecordDirMode); err != nil {
		return false, fmt.Errorf("runtime directory %s: set mode %o (is %o): %w", dir, RecordDirMode, fi.Mode().Perm(), err)
	}
	return true, nil
}

func removeStaleTemps(dir string) ([]string, error) {
	stale, err := filepath.Glob(filepath.Join(dir, recordTempPattern))
	if err != nil {
		return nil, fmt.Errorf("list stale ownership record files in %s: %w", dir, err)
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remove stale ownership record file %s: %w", p, err)
		}
	}
	return stale, nil
}

// save writes the record durably: a temporary file in the same directory,
// fsynced, renamed over the record, then the directory fsynced so the
// rename itself survives a crash.
func (r *Record) save() error {
	f := recordFile{Version: 1}
	for _, k := range r.Keys() {
		f.Services = append(f.Services, k.String())
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode ownership record %s: %w", r.path, err)
	}
	dir := filepath.Dir(r.path)
	if err := os.MkdirAll(dir, RecordDirMode); err != nil {
		return fmt.Errorf("create runtime directory %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, recordTempPattern)
	if err != nil {
		return fmt.Errorf("write ownership record %s: %w", r.path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after the rename
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write ownership record %s: %w", r.path, err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("fsync ownership record %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write ownership record %s: %w", r.path, err)
	}
	if err := os.Rename(tmp.Name(), r.path); err != nil {
		return fmt.Errorf("replace ownership record %s: %w", r.path, err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open runtime directory %s for fsync: %w", dir, err)
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync runtime directory %s: %w", dir, err)
	}
	return nil
}
