package models

import (
	"fmt"
	"strconv"
	"strings"
)

// Listing is one model of the registry as `feedrun models list` shows it:
// the entry's description, where it can be fetched from and whether its
// file is in the cache.
type Listing struct {
	Name             string   `json:"name"`
	Default          bool     `json:"default"`
	Family           string   `json:"family"`
	Parameters       string   `json:"parameters"`
	Quantisation     string   `json:"quantisation"`
	InstructionTuned bool     `json:"instruction_tuned"`
	Size             int64    `json:"size"` // bytes; 0 where models.yaml records none
	Sources          []string `json:"sources"`
	Cached           bool     `json:"cached"`
}

// List is every model of reg, in its order, with whether cache holds it.
func List(reg *Registry, cache Cache) []Listing {
	list := make([]Listing, len(reg.Models))
	for i, m := range reg.Models {
		l := Listing{Name: m.Name, Default: m.Name == reg.Default, Family: m.Family, Parameters: m.Parameters, Quantisation: m.Quantisation,
			InstructionTuned: m.InstructionTuned, Size: m.Size, Sources: []string{}, Cached: cache.InCache(m)}
		for _, s := range m.Sources {
			l.Sources = append(l.Sources, s.Kind())
		}
		list[i] = l
	}
	return list
}

// ListingColumns are the columns of a listing's CSV row (CSVRow).
var ListingColumns = []string{"name", "default", "family", "parameters", "quantisation", "instruction_tuned", "size", "sources", "cached"}

// CSVRow is the listing as a CSV row of ListingColumns.
func (l Listing) CSVRow() []string {
	return []string{l.Name, strconv.FormatBool(l.Default), l.Family, l.Parameters, l.Quantisation, strconv.FormatBool(l.InstructionTuned),
		strconv.FormatInt(l.Size, 10), strings.Join(l.Sources, "; "), strconv.FormatBool(l.Cached)}
}

// Tuning says whether the checkpoint is instruction-tuned in a word:
// instruct or base.
func (l Listing) Tuning() string {
	if l.InstructionTuned {
		return "instruct"
	}
	return "base"
}

// HumanSize is a file size to read: MiB below a GiB, "?" where none is
// recorded.
func HumanSize(n int64) string {
	switch {
	case n == 0:
		return "?"
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}

// Select is the models names name, in their order: with no name, the
// default model, or every model when all is set.
func (r *Registry) Select(names []string, all bool) ([]Model, error) {
	if len(names) == 0 {
		if all {
			names = r.Names()
		} else {
			names = []string{r.Default}
		}
	}
	var out []Model
	for _, n := range names {
		m, err := r.Lookup(n)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
