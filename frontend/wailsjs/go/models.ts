export namespace backend {
	
	export class Frame {
		session_id: string;
		stream_id: string;
		seq: number;
		event: string;
		data: any;
	
		static createFrom(source: any = {}) {
			return new Frame(source);
		}
	
		constructor(source: any = {}) {
			if ('string' === typeof source) source = JSON.parse(source);
			this.session_id = source["session_id"];
			this.stream_id = source["stream_id"];
			this.seq = source["seq"];
			this.event = source["event"];
			this.data = source["data"];
		}
	}
	export class MessageView {
		id: string;
		position: number;
		role: string;
		content: string;
		reasoning: string;
		kind: string;
		stream_id: string;
		created_at: number;
	
		static createFrom(source: any = {}) {
			return new MessageView(source);
		}
	
		constructor(source: any = {}) {
			if ('string' === typeof source) source = JSON.parse(source);
			this.id = source["id"];
			this.position = source["position"];
			this.role = source["role"];
			this.content = source["content"];
			this.reasoning = source["reasoning"];
			this.kind = source["kind"];
			this.stream_id = source["stream_id"];
			this.created_at = source["created_at"];
		}
	}
	export class ProviderCheck {
		ok: boolean;
		message: string;
		hint: string;
		models: string[];
	
		static createFrom(source: any = {}) {
			return new ProviderCheck(source);
		}
	
		constructor(source: any = {}) {
			if ('string' === typeof source) source = JSON.parse(source);
			this.ok = source["ok"];
			this.message = source["message"];
			this.hint = source["hint"];
			this.models = source["models"];
		}
	}
	export class Usage {
		input_tokens: number;
		output_tokens: number;
		cache_read_tokens: number;
		cache_write_tokens: number;
		estimated_cost: number;
	
		static createFrom(source: any = {}) {
			return new Usage(source);
		}
	
		constructor(source: any = {}) {
			if ('string' === typeof source) source = JSON.parse(source);
			this.input_tokens = source["input_tokens"];
			this.output_tokens = source["output_tokens"];
			this.cache_read_tokens = source["cache_read_tokens"];
			this.cache_write_tokens = source["cache_write_tokens"];
			this.estimated_cost = source["estimated_cost"];
		}
	}
	export class SessionInfo {
		id: string;
		title: string;
		title_manual: boolean;
		model: string;
		workspace: string;
		created_at: number;
		updated_at: number;
		active_stream_id: string;
		message_count: number;
		usage: Usage;
	
		static createFrom(source: any = {}) {
			return new SessionInfo(source);
		}
	
		constructor(source: any = {}) {
			if ('string' === typeof source) source = JSON.parse(source);
			this.id = source["id"];
			this.title = source["title"];
			this.title_manual = source["title_manual"];
			this.model = source["model"];
			this.workspace = source["workspace"];
			this.created_at = source["created_at"];
			this.updated_at = source["updated_at"];
			this.active_stream_id = source["active_stream_id"];
			this.message_count = source["message_count"];
			this.usage = this.convertValues(source["usage"], Usage);
		}
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
			if (!a) {
				return a;
			}
			if (a.slice && a.map) {
				return (a as any[]).map(elem => this.convertValues(elem, classs));
			} else if ("object" === typeof a) {
				if (asMap) {
					for (const key of Object.keys(a)) {
						a[key] = new classs(a[key]);
					}
					return a;
				}
				return new classs(a);
			}
			return a;
		}
	}
	export class SessionView {
		session: SessionInfo;
		messages: MessageView[];
	
		static createFrom(source: any = {}) {
			return new SessionView(source);
		}
	
		constructor(source: any = {}) {
			if ('string' === typeof source) source = JSON.parse(source);
			this.session = this.convertValues(source["session"], SessionInfo);
			this.messages = this.convertValues(source["messages"], MessageView);
		}
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
			if (!a) {
				return a;
			}
			if (a.slice && a.map) {
				return (a as any[]).map(elem => this.convertValues(elem, classs));
			} else if ("object" === typeof a) {
				if (asMap) {
					for (const key of Object.keys(a)) {
						a[key] = new classs(a[key]);
					}
					return a;
				}
				return new classs(a);
			}
			return a;
		}
	}
	export class Settings {
		provider_name: string;
		base_url: string;
		model: string;
		has_api_key: boolean;
		keyring_available: boolean;
		keyring_error: string;
		data_dir: string;
		log_dir: string;
	
		static createFrom(source: any = {}) {
			return new Settings(source);
		}
	
		constructor(source: any = {}) {
			if ('string' === typeof source) source = JSON.parse(source);
			this.provider_name = source["provider_name"];
			this.base_url = source["base_url"];
			this.model = source["model"];
			this.has_api_key = source["has_api_key"];
			this.keyring_available = source["keyring_available"];
			this.keyring_error = source["keyring_error"];
			this.data_dir = source["data_dir"];
			this.log_dir = source["log_dir"];
		}
	}
	export class SettingsInput {
		provider_name: string;
		base_url: string;
		model: string;
		api_key: string;
		clear_api_key: boolean;
	
		static createFrom(source: any = {}) {
			return new SettingsInput(source);
		}
	
		constructor(source: any = {}) {
			if ('string' === typeof source) source = JSON.parse(source);
			this.provider_name = source["provider_name"];
			this.base_url = source["base_url"];
			this.model = source["model"];
			this.api_key = source["api_key"];
			this.clear_api_key = source["clear_api_key"];
		}
	}
	export class SidecarStatus {
		state: string;
		runtime: string;
		agent_version: string;
		sidecar_version: string;
		attempt: number;
		next_retry_s: number;
		error: string;
		hint: string;
	
		static createFrom(source: any = {}) {
			return new SidecarStatus(source);
		}
	
		constructor(source: any = {}) {
			if ('string' === typeof source) source = JSON.parse(source);
			this.state = source["state"];
			this.runtime = source["runtime"];
			this.agent_version = source["agent_version"];
			this.sidecar_version = source["sidecar_version"];
			this.attempt = source["attempt"];
			this.next_retry_s = source["next_retry_s"];
			this.error = source["error"];
			this.hint = source["hint"];
		}
	}
	export class Status {
		sidecar: SidecarStatus;
		data_dir: string;
		log_dir: string;
		db_path: string;
		version: string;
	
		static createFrom(source: any = {}) {
			return new Status(source);
		}
	
		constructor(source: any = {}) {
			if ('string' === typeof source) source = JSON.parse(source);
			this.sidecar = this.convertValues(source["sidecar"], SidecarStatus);
			this.data_dir = source["data_dir"];
			this.log_dir = source["log_dir"];
			this.db_path = source["db_path"];
			this.version = source["version"];
		}
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
			if (!a) {
				return a;
			}
			if (a.slice && a.map) {
				return (a as any[]).map(elem => this.convertValues(elem, classs));
			} else if ("object" === typeof a) {
				if (asMap) {
					for (const key of Object.keys(a)) {
						a[key] = new classs(a[key]);
					}
					return a;
				}
				return new classs(a);
			}
			return a;
		}
	}
	export class TurnStarted {
		stream_id: string;
		user_message: MessageView;
	
		static createFrom(source: any = {}) {
			return new TurnStarted(source);
		}
	
		constructor(source: any = {}) {
			if ('string' === typeof source) source = JSON.parse(source);
			this.stream_id = source["stream_id"];
			this.user_message = this.convertValues(source["user_message"], MessageView);
		}
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
			if (!a) {
				return a;
			}
			if (a.slice && a.map) {
				return (a as any[]).map(elem => this.convertValues(elem, classs));
			} else if ("object" === typeof a) {
				if (asMap) {
					for (const key of Object.keys(a)) {
						a[key] = new classs(a[key]);
					}
					return a;
				}
				return new classs(a);
			}
			return a;
		}
	}

}

