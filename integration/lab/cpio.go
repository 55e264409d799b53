package lab

import (
	"fmt"
	"io"
)

// cpioWriter writes the "newc" cpio format the kernel unpacks as initramfs.
type cpioWriter struct {
	w   io.Writer
	ino uint32
	n   int64
}

func newCpioWriter(w io.Writer) *cpioWriter { return &cpioWriter{w: w, ino: 1} }

func (c *cpioWriter) header(name string, mode uint32, size int) error {
	c.ino++
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, 1, 0, size, 0, 0, 0, 0, len(name)+1, 0)
	if err := c.write([]byte(hdr + name + "\x00")); err != nil {
		return err
	}
	return c.pad()
}

func (c *cpioWriter) write(b []byte) error {
	n, err := c.w.Write(b)
	c.n += int64(n)
	if err != nil {
		return fmt.Errorf("write cpio: %w", err)
	}
	return nil
}

func (c *cpioWriter) pad() error {
	if r := c.n % 4; r != 0 {
		return c.write(make([]byte, 4-r))
	}
	return nil
}

func (c *cpioWriter) dir(name string) error { return c.header(name, 0o040755, 0) }

func (c *cpioWriter) file(name string, perm uint32, data []byte) error {
	if err := c.header(name, 0o100000|perm, len(data)); err != nil {
		return err
	}
	if err := c.write(data); err != nil {
		return err
	}
	return c.pad()
}

func (c *cpioWriter) close() error { return c.header("TRAILER!!!", 0, 0) }
