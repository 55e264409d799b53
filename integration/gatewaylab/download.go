package gatewaylab

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// A download is paced by the backend, so that it lasts long enough to
// lose a director in the middle: DownloadChunk bytes every DownloadPace
// unless the request says another pace.
const (
	DownloadChunk = 32 << 10
	DownloadPace  = 25 * time.Millisecond
)

// pattern is the byte at offset i of every download.
func pattern(i int) byte { return byte(i*7 + i/251) }

// writeDownload writes size bytes of the pattern, a chunk every pace.
func writeDownload(w http.ResponseWriter, size int, pace time.Duration) {
	w.Header().Set("Content-Length", strconv.Itoa(size))
	buf := make([]byte, DownloadChunk)
	fl, _ := w.(http.Flusher)
	for off := 0; off < size; off += DownloadChunk {
		n := min(DownloadChunk, size-off)
		for i := range n {
			buf[i] = pattern(off + i)
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
		time.Sleep(pace)
	}
}

// Download is how one download ended.
type Download struct {
	// Bytes is how many bytes arrived, each as sent.
	Bytes int
	// Err says why it is not complete; nil when all arrived intact.
	Err error
	// Answer is the response's X-Served-By header: which backend sent it,
	// through which gateway.
	Answer string
}

// Fetch downloads url (a backend's /download?size=N) with client and
// checks every byte and the length.
func Fetch(ctx context.Context, client *http.Client, url string, size int) Download {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Download{Err: err}
	}
	resp, err := client.Do(req)
	if err != nil {
		return Download{Err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	d := Download{Answer: resp.Header.Get(ServedByHeader)}
	if resp.StatusCode != http.StatusOK {
		d.Err = fmt.Errorf("status %s", resp.Status)
		return d
	}
	buf := make([]byte, 64<<10)
	for {
		k, err := resp.Body.Read(buf)
		for i := range k {
			if buf[i] != pattern(d.Bytes+i) {
				d.Bytes += i
				d.Err = fmt.Errorf("byte %d differs", d.Bytes)
				return d
			}
		}
		d.Bytes += k
		if err == io.EOF {
			break
		}
		if err != nil {
			d.Err = err
			return d
		}
	}
	if d.Bytes != size {
		d.Err = fmt.Errorf("short: %d of %d bytes", d.Bytes, size)
	}
	return d
}
