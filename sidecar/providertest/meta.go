package providertest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// Model metadata, in the shapes the real servers publish it, so the host's context
// meter, image check and compaction can be tested against each:
//
//	GET  {BaseURL}/models                 OpenRouter-style entries: context_length,
//	                                      architecture.input_modalities, supported_parameters
//	POST {Addr}/api/show {"model"}        Ollama: model_info["<arch>.context_length"],
//	                                      parameters "num_ctx N", capabilities
//	GET  {Addr}/api/ps                    Ollama: the loaded models' context_length
//	GET  {Addr}/props                     llama.cpp: default_generation_settings.n_ctx,
//	                                      modalities.vision
//	GET  {Addr}/api/v0/models/{model}     LM Studio: max_context_length,
//	                                      loaded_context_length, type (vlm / llm)
//	POST /_control/meta                   body: {"model": ModelMeta}: set them
//
// A model without metadata is listed plainly (id only) and unknown to the others (404).

// ModelMeta is what the scripted provider publishes about one model.
type ModelMeta struct {
	// ContextLength is the model's maximum context (OpenRouter's context_length,
	// Ollama's <arch>.context_length, LM Studio's max_context_length).
	ContextLength int64 `json:"context_length,omitempty"`
	// RunningContext is the context the server runs it with (Ollama's num_ctx in
	// parameters and /api/ps, llama.cpp's n_ctx, LM Studio's loaded_context_length); 0
	// leaves them out.
	RunningContext int64 `json:"running_context,omitempty"`
	Vision         bool  `json:"vision,omitempty"`
	Reasoning      bool  `json:"reasoning,omitempty"`
}

// SetModelMeta publishes meta for model (GET /models lists the model too).
func (s *Server) SetModelMeta(model string, meta ModelMeta) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.meta == nil {
		s.meta = map[string]ModelMeta{}
	}
	s.meta[model] = meta
	for _, id := range s.models {
		if id == model {
			return
		}
	}
	s.models = append(s.models, model)
}

func (s *Server) metaOf(model string) (ModelMeta, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.meta[model]
	return m, ok
}

func (s *Server) routeMeta(mux *http.ServeMux) {
	mux.HandleFunc("POST /_control/meta", func(w http.ResponseWriter, r *http.Request) {
		var v map[string]ModelMeta
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&v); err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody(`want {"model": {"context_length": n, ...}}`))
			return
		}
		for model, m := range v {
			s.SetModelMeta(model, m)
		}
		writeJSON(w, http.StatusOK, `{"ok":true}`)
	})
	mux.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) {
		var v struct {
			Model string `json:"model"`
			Name  string `json:"name"`
		}
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&v)
		model := v.Model
		if model == "" {
			model = v.Name
		}
		m, ok := s.metaOf(model)
		if !ok {
			writeJSON(w, http.StatusNotFound, mustJSON(map[string]string{"error": "model '" + model + "' not found"}))
			return
		}
		caps := []string{"completion", "tools"}
		if m.Vision {
			caps = append(caps, "vision")
		}
		if m.Reasoning {
			caps = append(caps, "thinking")
		}
		params := "stop \"<|eot_id|>\""
		if m.RunningContext > 0 {
			params = "num_ctx " + itoa(m.RunningContext) + "\n" + params
		}
		writeJSON(w, http.StatusOK, mustJSON(map[string]any{
			"modelfile":    "FROM " + model,
			"parameters":   params,
			"details":      map[string]any{"format": "gguf", "family": "llama"},
			"model_info":   map[string]any{"general.architecture": "llama", "llama.context_length": m.ContextLength, "llama.embedding_length": 4096},
			"capabilities": caps,
		}))
	})
	mux.HandleFunc("GET /api/ps", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		var list []map[string]any
		for id, m := range s.meta {
			if m.RunningContext > 0 {
				list = append(list, map[string]any{"name": id, "model": id, "context_length": m.RunningContext})
			}
		}
		s.mu.Unlock()
		if list == nil {
			list = []map[string]any{}
		}
		writeJSON(w, http.StatusOK, mustJSON(map[string]any{"models": list}))
	})
	mux.HandleFunc("GET /props", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		var m ModelMeta
		for _, id := range s.models {
			if mm, ok := s.meta[id]; ok {
				m = mm
				break
			}
		}
		s.mu.Unlock()
		nctx := m.RunningContext
		if nctx == 0 {
			nctx = m.ContextLength
		}
		writeJSON(w, http.StatusOK, mustJSON(map[string]any{
			"default_generation_settings": map[string]any{"n_ctx": nctx, "params": map[string]any{"temperature": 0.8}},
			"total_slots":                 1,
			"model_path":                  "/models/scripted.gguf",
			"modalities":                  map[string]bool{"vision": m.Vision, "audio": false},
		}))
	})
	mux.HandleFunc("GET /api/v0/models/{model...}", func(w http.ResponseWriter, r *http.Request) {
		model := strings.TrimPrefix(r.PathValue("model"), "/")
		m, ok := s.metaOf(model)
		if !ok {
			writeJSON(w, http.StatusNotFound, mustJSON(map[string]any{"error": "model not found"}))
			return
		}
		typ := "llm"
		if m.Vision {
			typ = "vlm"
		}
		out := map[string]any{"id": model, "object": "model", "type": typ, "state": "loaded", "max_context_length": m.ContextLength}
		if m.RunningContext > 0 {
			out["loaded_context_length"] = m.RunningContext
		}
		writeJSON(w, http.StatusOK, mustJSON(out))
	})
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
