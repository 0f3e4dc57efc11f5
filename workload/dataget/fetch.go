package dataget

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// Progress reports a download: Done of Total bytes of the dataset's files,
// File the one being read.
type Progress struct {
	File        string
	Done, Total int64
}

// ErrMismatch is what a file whose bytes are not the pinned ones fails
// with (wrong size or wrong SHA-256).
var ErrMismatch = errors.New("does not match the pinned file")

// fetcher gets a spec's files into a staging directory and verifies them.
type fetcher struct {
	spec     Spec
	opt      Options
	total    int64
	done     int64
	progress func(Progress)
}

// fetchAll fetches or copies every file of the spec into dir, verified.
func (f *fetcher) fetchAll(ctx context.Context, dir string) ([]FileResult, error) {
	var out []FileResult
	for _, file := range f.spec.Files {
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
		res, err := f.fetchOne(ctx, file, filepath.Join(dir, file.Base()))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file.Base(), err)
		}
		f.opt.Log.Info().Str("file", file.Base()).Str("from", res.From).Int64("bytes", res.Bytes).
			Str("sha256", res.SHA256).Msg("verified")
		out = append(out, res)
	}
	return out, nil
}

// fetchOne streams one file into dst through a SHA-256, reading at most
// one byte more than the pinned size, and checks size and hash. dst is in
// the staging directory, so a refused file is never where the dataset goes.
func (f *fetcher) fetchOne(ctx context.Context, file File, dst string) (FileResult, error) {
	res := FileResult{Name: file.Base(), SHA256: file.SHA256}
	var body io.ReadCloser
	if f.opt.From != "" {
		res.From = filepath.Join(f.opt.From, file.Base())
		fh, err := os.Open(res.From)
		if err != nil {
			return res, err
		}
		body = fh
	} else {
		res.From = f.spec.URL(f.opt.BaseURL, file)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, res.From, nil)
		if err != nil {
			return res, err
		}
		resp, err := f.opt.Client.Do(req)
		if err != nil {
			return res, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return res, fmt.Errorf("GET %s: %s", res.From, resp.Status)
		}
		if resp.ContentLength > file.Size {
			resp.Body.Close()
			return res, fmt.Errorf("GET %s: %d bytes announced, the pinned file has %d: %w", res.From, resp.ContentLength, file.Size, ErrMismatch)
		}
		body = resp.Body
	}
	defer body.Close()
	out, err := os.Create(dst)
	if err != nil {
		return res, err
	}
	h := sha256.New()
	n, copyErr := io.Copy(io.MultiWriter(out, h), &countingReader{r: io.LimitReader(body, file.Size+1), f: f, name: file.Base()})
	if err := errors.Join(copyErr, out.Close()); err != nil {
		if ctx.Err() != nil {
			return res, context.Cause(ctx)
		}
		// A transfer cut short (the server closed early) is a truncation:
		// say how far it got.
		return res, fmt.Errorf("read %s: truncated after %d of %d bytes: %w", res.From, n, file.Size, err)
	}
	res.Bytes = n
	got := hex.EncodeToString(h.Sum(nil))
	switch {
	case n < file.Size:
		return res, fmt.Errorf("%s: truncated: %d of %d bytes (sha256 %s, want %s): %w", res.From, n, file.Size, got, file.SHA256, ErrMismatch)
	case n > file.Size:
		return res, fmt.Errorf("%s: longer than the pinned %d bytes: %w", res.From, file.Size, ErrMismatch)
	case got != file.SHA256:
		return res, fmt.Errorf("%s: sha256 %s, want %s (%d bytes): %w", res.From, got, file.SHA256, n, ErrMismatch)
	}
	return res, nil
}

// countingReader reports progress as bytes pass.
type countingReader struct {
	r    io.Reader
	f    *fetcher
	name string
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.f.done += int64(n)
	if c.f.progress != nil && n > 0 {
		c.f.progress(Progress{File: c.name, Done: c.f.done, Total: c.f.total})
	}
	return n, err
}
