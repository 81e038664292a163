package gguf

import (
	"bytes"
	"reflect"
	"testing"
)

// ok fails the test at once if err is not nil.
func ok(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// equals fails the test if got and want differ.
func equals(t testing.TB, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

// encode writes kvs and tensors and parses the result back.
func encode(t testing.TB, kvs []KV, tensors []Tensor) ([]byte, *File) {
	t.Helper()
	var buf bytes.Buffer
	ok(t, Write(&buf, kvs, tensors))
	f, err := Read(bytes.NewReader(buf.Bytes()))
	ok(t, err)
	return buf.Bytes(), f
}
