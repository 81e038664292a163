package models

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// pullHuggingFace downloads src into <file>.part, resuming what an earlier
// attempt left there, and installs it.
func (f *Fetcher) pullHuggingFace(ctx context.Context, m Model, src HuggingFaceSource) (string, int64, error) {
	u := f.HFEndpoint + "/" + escapePath(src.Repo) + "/resolve/main/" + escapePath(src.File)
	return f.fetchHTTP(ctx, u, f.HFToken, f.Cache.Path(m), m.File, modelExpected(m))
}

// fetchHTTP downloads u into dest's part file, resuming what an earlier
// attempt left there, and installs it at dest once it checks out. token,
// when set, is sent as a bearer token: only Hugging Face gets one.
func (f *Fetcher) fetchHTTP(ctx context.Context, u, token, dest, label string, want expected) (string, int64, error) {
	part := dest + ".part"
	// A server may refuse the range of a part that is already complete or
	// longer than the file (416); the part is then discarded and the
	// download restarts once from zero.
	for attempt := 0; ; attempt++ {
		err := f.download(ctx, u, token, part, want.size, label)
		var unsatisfiable rangeNotSatisfiable
		if errors.As(err, &unsatisfiable) && attempt == 0 {
			if err := os.Remove(part); err != nil {
				return "", 0, err
			}
			continue
		}
		if err != nil {
			return "", 0, err
		}
		return f.install(ctx, part, dest, want)
	}
}

type rangeNotSatisfiable struct{ url string }

func (e rangeNotSatisfiable) Error() string {
	return "GET " + e.url + ": 416 Range Not Satisfiable"
}

// download completes the part file from u; size is the file's expected
// size (0: unknown) and label names it on the progress bar. On a network
// failure the bytes received so far stay in the part, for the next attempt
// to resume from.
func (f *Fetcher) download(ctx context.Context, u, token, part string, size int64, label string) error {
	var have int64
	if st, err := os.Stat(part); err == nil && (size == 0 || st.Size() <= size) {
		have = st.Size()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	if token != "" {
		// net/http drops this header when Hugging Face redirects to its
		// CDN on another host, so the token never leaves huggingface.co.
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()

	total := int64(-1)
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		start, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != have {
			return fmt.Errorf("GET %s: asked for bytes from %d, got Content-Range %q", u, have, resp.Header.Get("Content-Range"))
		}
		total = size
	case resp.StatusCode == http.StatusOK:
		// A server that ignores Range sends the whole file: start over
		// rather than append it to the part.
		have = 0
		total = resp.ContentLength
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
		return rangeNotSatisfiable{u}
	default:
		return httpError(u, resp)
	}
	if total < 0 && size != 0 {
		total = size
	}

	out, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	if err := out.Truncate(have); err != nil {
		return err
	}
	if _, err := out.Seek(have, io.SeekStart); err != nil {
		return err
	}
	bar := f.progress(total, have, label)
	n, err := io.Copy(io.MultiWriter(out, bar), resp.Body)
	if err != nil {
		got := have + n
		if got == 0 {
			// Nothing to resume from: leave no empty part behind.
			out.Close()
			os.Remove(part)
		}
		if total > 0 {
			return fmt.Errorf("download interrupted after %d of %d bytes (pull again to resume): %w", got, total, err)
		}
		return fmt.Errorf("download interrupted after %d bytes (pull again to resume): %w", got, err)
	}
	bar.Finish()
	if err := out.Sync(); err != nil {
		return err
	}
	return out.Close()
}

// httpError turns a failed response into a one-line error; Hugging Face
// puts its reason in X-Error-Message.
func httpError(u string, resp *http.Response) error {
	msg := fmt.Sprintf("GET %s: %s", u, resp.Status)
	if reason := resp.Header.Get("X-Error-Message"); reason != "" {
		msg += ": " + reason
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		msg += " (a gated or private repository needs HF_TOKEN)"
	}
	return errors.New(msg)
}

// parseContentRange reads "bytes start-end/size"; size is -1 when given as *.
func parseContentRange(h string) (start, size int64, ok bool) {
	var end int64
	if _, err := fmt.Sscanf(h, "bytes %d-%d/%d", &start, &end, &size); err == nil {
		return start, size, true
	}
	if _, err := fmt.Sscanf(h, "bytes %d-%d/*", &start, &end); err == nil {
		return start, -1, true
	}
	return 0, 0, false
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
