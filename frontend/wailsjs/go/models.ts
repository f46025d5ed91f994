export namespace attachments {
	
	export class AttachmentContent {
	    attachment: store.Attachment;
	    data_url: string;
	    text: string;
	
	    static createFrom(source: any = {}) {
	        return new AttachmentContent(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.attachment = this.convertValues(source["attachment"], store.Attachment);
	        this.data_url = source["data_url"];
	        this.text = source["text"];
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

export namespace backend {
	
	export class ACPEnvVar {
	    name: string;
	    value: string;
	    secret: boolean;
	    has_value?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new ACPEnvVar(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.value = source["value"];
	        this.secret = source["secret"];
	        this.has_value = source["has_value"];
	    }
	}
	export class ACPAgent {
	    id: string;
	    name: string;
	    command: string;
	    args: string[];
	    env: ACPEnvVar[];
	    dir: string;
	    preset?: string;
	
	    static createFrom(source: any = {}) {
	        return new ACPAgent(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.command = source["command"];
	        this.args = source["args"];
	        this.env = this.convertValues(source["env"], ACPEnvVar);
	        this.dir = source["dir"];
	        this.preset = source["preset"];
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
	
	export class ACPPreset {
	    id: string;
	    name: string;
	    command: string;
	    args: string[];
	    install: string;
	    notes?: string;
	
	    static createFrom(source: any = {}) {
	        return new ACPPreset(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.command = source["command"];
	        this.args = source["args"];
	        this.install = source["install"];
	        this.notes = source["notes"];
	    }
	}
	export class ACPSession {
	    agent_session_id: string;
	    title: string;
	    preview: string;
	    started_at: number;
	    message_count: number;
	    source: string;
	    workspace?: string;
	    updated_at?: number;
	    talaria_session_id: string;
	
	    static createFrom(source: any = {}) {
	        return new ACPSession(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.agent_session_id = source["agent_session_id"];
	        this.title = source["title"];
	        this.preview = source["preview"];
	        this.started_at = source["started_at"];
	        this.message_count = source["message_count"];
	        this.source = source["source"];
	        this.workspace = source["workspace"];
	        this.updated_at = source["updated_at"];
	        this.talaria_session_id = source["talaria_session_id"];
	    }
	}
	export class ACPTestResult {
	    ok: boolean;
	    info: protocol.AgentInfoResult;
	    message?: string;
	    hint?: string;
	    output?: string[];
	    took_s: number;
	
	    static createFrom(source: any = {}) {
	        return new ACPTestResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.ok = source["ok"];
	        this.info = this.convertValues(source["info"], protocol.AgentInfoResult);
	        this.message = source["message"];
	        this.hint = source["hint"];
	        this.output = source["output"];
	        this.took_s = source["took_s"];
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
	export class AboutLibrary {
	    name: string;
	    version: string;
	    license: string;
	    ecosystem: string;
	
	    static createFrom(source: any = {}) {
	        return new AboutLibrary(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.version = source["version"];
	        this.license = source["license"];
	        this.ecosystem = source["ecosystem"];
	    }
	}
	export class About {
	    version: string;
	    commit: string;
	    build_date: string;
	    go_version: string;
	    platform: string;
	    license: string;
	    license_text: string;
	    paths: core.Paths;
	    libraries: AboutLibrary[];
	    error: string;
	
	    static createFrom(source: any = {}) {
	        return new About(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.version = source["version"];
	        this.commit = source["commit"];
	        this.build_date = source["build_date"];
	        this.go_version = source["go_version"];
	        this.platform = source["platform"];
	        this.license = source["license"];
	        this.license_text = source["license_text"];
	        this.paths = this.convertValues(source["paths"], core.Paths);
	        this.libraries = this.convertValues(source["libraries"], AboutLibrary);
	        this.error = source["error"];
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
	
	export class RunningTurn {
	    session_id: string;
	    parent_session_id: string;
	    task_id: string;
	    title: string;
	    stream_id: string;
	    started_at: number;
	    approvals: number;
	    clarifies: number;
	    full_access: boolean;
	
	    static createFrom(source: any = {}) {
	        return new RunningTurn(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.session_id = source["session_id"];
	        this.parent_session_id = source["parent_session_id"];
	        this.task_id = source["task_id"];
	        this.title = source["title"];
	        this.stream_id = source["stream_id"];
	        this.started_at = source["started_at"];
	        this.approvals = source["approvals"];
	        this.clarifies = source["clarifies"];
	        this.full_access = source["full_access"];
	    }
	}
	export class Activity {
	    state: string;
	    running: RunningTurn[];
	    waiting: number;
	    full_access: number;
	    sidecar: supervisor.Status;
	
	    static createFrom(source: any = {}) {
	        return new Activity(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.state = source["state"];
	        this.running = this.convertValues(source["running"], RunningTurn);
	        this.waiting = source["waiting"];
	        this.full_access = source["full_access"];
	        this.sidecar = this.convertValues(source["sidecar"], supervisor.Status);
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
	export class AllowRule {
	    pattern: string;
	    description: string;
	    added_at: number;
	
	    static createFrom(source: any = {}) {
	        return new AllowRule(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.pattern = source["pattern"];
	        this.description = source["description"];
	        this.added_at = source["added_at"];
	    }
	}
	export class Autostart {
	    enabled: boolean;
	    where: string;
	    command: string;
	    error: string;
	
	    static createFrom(source: any = {}) {
	        return new Autostart(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.enabled = source["enabled"];
	        this.where = source["where"];
	        this.command = source["command"];
	        this.error = source["error"];
	    }
	}
	export class Branched {
	    stream_id: string;
	    user_message: store.Message;
	    fork_id: string;
	
	    static createFrom(source: any = {}) {
	        return new Branched(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.stream_id = source["stream_id"];
	        this.user_message = this.convertValues(source["user_message"], store.Message);
	        this.fork_id = source["fork_id"];
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
	export class ContextMeter {
	    used_tokens: number;
	    estimated: boolean;
	    context_length: number;
	    source: string;
	    note: string;
	    compact_at: number;
	    model: string;
	    available: boolean;
	
	    static createFrom(source: any = {}) {
	        return new ContextMeter(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.used_tokens = source["used_tokens"];
	        this.estimated = source["estimated"];
	        this.context_length = source["context_length"];
	        this.source = source["source"];
	        this.note = source["note"];
	        this.compact_at = source["compact_at"];
	        this.model = source["model"];
	        this.available = source["available"];
	    }
	}
	export class ChatFigures {
	    turns: store.TurnFigures[];
	    cost: number;
	    cost_known: number;
	    cost_unknown: number;
	    context: ContextMeter;
	
	    static createFrom(source: any = {}) {
	        return new ChatFigures(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.turns = this.convertValues(source["turns"], store.TurnFigures);
	        this.cost = source["cost"];
	        this.cost_known = source["cost_known"];
	        this.cost_unknown = source["cost_unknown"];
	        this.context = this.convertValues(source["context"], ContextMeter);
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
	export class ChatMCPServer {
	    name: string;
	    transport: string;
	    on: boolean;
	    global: boolean;
	    override: boolean;
	
	    static createFrom(source: any = {}) {
	        return new ChatMCPServer(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.transport = source["transport"];
	        this.on = source["on"];
	        this.global = source["global"];
	        this.override = source["override"];
	    }
	}
	export class ChatMCP {
	    servers: ChatMCPServer[];
	    note: string;
	    used: boolean;
	
	    static createFrom(source: any = {}) {
	        return new ChatMCP(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.servers = this.convertValues(source["servers"], ChatMCPServer);
	        this.note = source["note"];
	        this.used = source["used"];
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
	
	export class ChatOptions {
	    system_prompt?: string;
	    tools?: string[];
	    reasoning_effort?: string;
	    max_output_tokens?: number;
	    mcp_servers?: {[key: string]: boolean};
	
	    static createFrom(source: any = {}) {
	        return new ChatOptions(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.system_prompt = source["system_prompt"];
	        this.tools = source["tools"];
	        this.reasoning_effort = source["reasoning_effort"];
	        this.max_output_tokens = source["max_output_tokens"];
	        this.mcp_servers = source["mcp_servers"];
	    }
	}
	export class ChatPreferences {
	    default_system_prompt: string;
	    compact_at: number;
	    text_limit_kb: number;
	    stream_idle_timeout_s: number;
	
	    static createFrom(source: any = {}) {
	        return new ChatPreferences(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.default_system_prompt = source["default_system_prompt"];
	        this.compact_at = source["compact_at"];
	        this.text_limit_kb = source["text_limit_kb"];
	        this.stream_idle_timeout_s = source["stream_idle_timeout_s"];
	    }
	}
	export class ModelSettings {
	    context_length?: number;
	    price?: turn.Price;
	
	    static createFrom(source: any = {}) {
	        return new ModelSettings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.context_length = source["context_length"];
	        this.price = this.convertValues(source["price"], turn.Price);
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
	export class ModelInfo {
	    provider: string;
	    model: string;
	    context_length: number;
	    context_source: string;
	    provider_context: number;
	    context_note: string;
	    vision: string;
	    reasoning: string;
	    settings: ModelSettings;
	    error: string;
	
	    static createFrom(source: any = {}) {
	        return new ModelInfo(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.provider = source["provider"];
	        this.model = source["model"];
	        this.context_length = source["context_length"];
	        this.context_source = source["context_source"];
	        this.provider_context = source["provider_context"];
	        this.context_note = source["context_note"];
	        this.vision = source["vision"];
	        this.reasoning = source["reasoning"];
	        this.settings = this.convertValues(source["settings"], ModelSettings);
	        this.error = source["error"];
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
	export class ChatSettings {
	    options: ChatOptions;
	    model: string;
	    default_model: string;
	    model_info?: ModelInfo;
	    features: core.RuntimeFeatures;
	    runtime: string;
	    default_system_prompt: string;
	
	    static createFrom(source: any = {}) {
	        return new ChatSettings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.options = this.convertValues(source["options"], ChatOptions);
	        this.model = source["model"];
	        this.default_model = source["default_model"];
	        this.model_info = this.convertValues(source["model_info"], ModelInfo);
	        this.features = this.convertValues(source["features"], core.RuntimeFeatures);
	        this.runtime = source["runtime"];
	        this.default_system_prompt = source["default_system_prompt"];
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
	export class CompactResult {
	    summary?: store.Message;
	    message: string;
	    retried?: turn.Started;
	
	    static createFrom(source: any = {}) {
	        return new CompactResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.summary = this.convertValues(source["summary"], store.Message);
	        this.message = source["message"];
	        this.retried = this.convertValues(source["retried"], turn.Started);
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
	
	export class RuntimeDiagnostics {
	    status: supervisor.Status;
	    stderr_tail: string[];
	
	    static createFrom(source: any = {}) {
	        return new RuntimeDiagnostics(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.status = this.convertValues(source["status"], supervisor.Status);
	        this.stderr_tail = source["stderr_tail"];
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
	export class Diagnostics {
	    app_version: string;
	    host_protocol: number;
	    state: string;
	    runtime: string;
	    sidecar_version: string;
	    agent_version: string;
	    protocol: number;
	    python_path: string;
	    python_version: string;
	    pid: number;
	    sidecar_uptime_s: number;
	    uptime_s: number;
	    restarts: number;
	    attempt: number;
	    next_retry_s: number;
	    error: string;
	    hint: string;
	    stderr_tail: string[];
	    paths: core.Paths;
	    dialect: string;
	    features: string[];
	    go_version: string;
	    platform: string;
	    runtimes: RuntimeDiagnostics[];
	    last_crash: crashlog.Crash;
	
	    static createFrom(source: any = {}) {
	        return new Diagnostics(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.app_version = source["app_version"];
	        this.host_protocol = source["host_protocol"];
	        this.state = source["state"];
	        this.runtime = source["runtime"];
	        this.sidecar_version = source["sidecar_version"];
	        this.agent_version = source["agent_version"];
	        this.protocol = source["protocol"];
	        this.python_path = source["python_path"];
	        this.python_version = source["python_version"];
	        this.pid = source["pid"];
	        this.sidecar_uptime_s = source["sidecar_uptime_s"];
	        this.uptime_s = source["uptime_s"];
	        this.restarts = source["restarts"];
	        this.attempt = source["attempt"];
	        this.next_retry_s = source["next_retry_s"];
	        this.error = source["error"];
	        this.hint = source["hint"];
	        this.stderr_tail = source["stderr_tail"];
	        this.paths = this.convertValues(source["paths"], core.Paths);
	        this.dialect = source["dialect"];
	        this.features = source["features"];
	        this.go_version = source["go_version"];
	        this.platform = source["platform"];
	        this.runtimes = this.convertValues(source["runtimes"], RuntimeDiagnostics);
	        this.last_crash = this.convertValues(source["last_crash"], crashlog.Crash);
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
	export class ExportFile {
	    name: string;
	    mime_type: string;
	    content: string;
	
	    static createFrom(source: any = {}) {
	        return new ExportFile(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.mime_type = source["mime_type"];
	        this.content = source["content"];
	    }
	}
	export class HermesInstall {
	    python: string;
	    prefix?: string[];
	    version: string;
	    python_version: string;
	    source: string;
	    home: string;
	    profiles: string[];
	    problem?: string;
	    hint?: string;
	
	    static createFrom(source: any = {}) {
	        return new HermesInstall(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.python = source["python"];
	        this.prefix = source["prefix"];
	        this.version = source["version"];
	        this.python_version = source["python_version"];
	        this.source = source["source"];
	        this.home = source["home"];
	        this.profiles = source["profiles"];
	        this.problem = source["problem"];
	        this.hint = source["hint"];
	    }
	}
	export class HermesSession {
	    agent_session_id: string;
	    title: string;
	    preview: string;
	    started_at: number;
	    message_count: number;
	    source: string;
	    workspace?: string;
	    updated_at?: number;
	    talaria_session_id: string;
	
	    static createFrom(source: any = {}) {
	        return new HermesSession(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.agent_session_id = source["agent_session_id"];
	        this.title = source["title"];
	        this.preview = source["preview"];
	        this.started_at = source["started_at"];
	        this.message_count = source["message_count"];
	        this.source = source["source"];
	        this.workspace = source["workspace"];
	        this.updated_at = source["updated_at"];
	        this.talaria_session_id = source["talaria_session_id"];
	    }
	}
	export class HermesSettings {
	    path: string;
	    home: string;
	    model: string;
	    install: HermesInstall;
	
	    static createFrom(source: any = {}) {
	        return new HermesSettings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.home = source["home"];
	        this.model = source["model"];
	        this.install = this.convertValues(source["install"], HermesInstall);
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
	export class LocalServer {
	    provider_name: string;
	    label: string;
	    base_url: string;
	    models: string[];
	
	    static createFrom(source: any = {}) {
	        return new LocalServer(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.provider_name = source["provider_name"];
	        this.label = source["label"];
	        this.base_url = source["base_url"];
	        this.models = source["models"];
	    }
	}
	export class MCPAuthState {
	    server: string;
	    state: string;
	    reason: string;
	    expires: string;
	
	    static createFrom(source: any = {}) {
	        return new MCPAuthState(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.server = source["server"];
	        this.state = source["state"];
	        this.reason = source["reason"];
	        this.expires = source["expires"];
	    }
	}
	export class MCPImportIssue {
	    name: string;
	    reason: string;
	
	    static createFrom(source: any = {}) {
	        return new MCPImportIssue(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.reason = source["reason"];
	    }
	}
	export class MCPVar {
	    name: string;
	    value: string;
	    secret: boolean;
	    has_value: boolean;
	
	    static createFrom(source: any = {}) {
	        return new MCPVar(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.value = source["value"];
	        this.secret = source["secret"];
	        this.has_value = source["has_value"];
	    }
	}
	export class MCPServerConfig {
	    name: string;
	    transport: string;
	    command: string;
	    args: string[];
	    env: MCPVar[];
	    cwd: string;
	    url: string;
	    headers: MCPVar[];
	    enabled: boolean;
	    allow_read_only: boolean;
	    sandbox: string;
	    disabled_tools: string[];
	    writable_paths: string[];
	
	    static createFrom(source: any = {}) {
	        return new MCPServerConfig(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.transport = source["transport"];
	        this.command = source["command"];
	        this.args = source["args"];
	        this.env = this.convertValues(source["env"], MCPVar);
	        this.cwd = source["cwd"];
	        this.url = source["url"];
	        this.headers = this.convertValues(source["headers"], MCPVar);
	        this.enabled = source["enabled"];
	        this.allow_read_only = source["allow_read_only"];
	        this.sandbox = source["sandbox"];
	        this.disabled_tools = source["disabled_tools"];
	        this.writable_paths = source["writable_paths"];
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
	export class MCPImportResult {
	    added: string[];
	    replaced: string[];
	    skipped: MCPImportIssue[];
	    servers: MCPServerConfig[];
	
	    static createFrom(source: any = {}) {
	        return new MCPImportResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.added = source["added"];
	        this.replaced = source["replaced"];
	        this.skipped = this.convertValues(source["skipped"], MCPImportIssue);
	        this.servers = this.convertValues(source["servers"], MCPServerConfig);
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
	export class MCPPromptText {
	    server: string;
	    name: string;
	    description: string;
	    text: string;
	
	    static createFrom(source: any = {}) {
	        return new MCPPromptText(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.server = source["server"];
	        this.name = source["name"];
	        this.description = source["description"];
	        this.text = source["text"];
	    }
	}
	
	
	
	
	export class PendingView {
	    approval: number[];
	    clarify: number[];
	    approval_count: number;
	    clarify_count: number;
	    yolo: boolean;
	
	    static createFrom(source: any = {}) {
	        return new PendingView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.approval = source["approval"];
	        this.clarify = source["clarify"];
	        this.approval_count = source["approval_count"];
	        this.clarify_count = source["clarify_count"];
	        this.yolo = source["yolo"];
	    }
	}
	export class ProviderCheck {
	    ok: boolean;
	    message: string;
	    hint: string;
	    models: string[];
	    local?: LocalServer[];
	
	    static createFrom(source: any = {}) {
	        return new ProviderCheck(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.ok = source["ok"];
	        this.message = source["message"];
	        this.hint = source["hint"];
	        this.models = source["models"];
	        this.local = this.convertValues(source["local"], LocalServer);
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
	export class QuickAskStatus {
	    active: boolean;
	    shortcut: string;
	    shortcut_active: boolean;
	    shortcut_error: string;
	    command: string;
	
	    static createFrom(source: any = {}) {
	        return new QuickAskStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.active = source["active"];
	        this.shortcut = source["shortcut"];
	        this.shortcut_active = source["shortcut_active"];
	        this.shortcut_error = source["shortcut_error"];
	        this.command = source["command"];
	    }
	}
	
	
	export class SessionSandbox {
	    mode: string;
	    network: boolean;
	
	    static createFrom(source: any = {}) {
	        return new SessionSandbox(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.mode = source["mode"];
	        this.network = source["network"];
	    }
	}
	export class SessionView {
	    session: store.Session;
	    messages: store.Message[];
	
	    static createFrom(source: any = {}) {
	        return new SessionView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.session = this.convertValues(source["session"], store.Session);
	        this.messages = this.convertValues(source["messages"], store.Message);
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
	    workspace: string;
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
	        this.workspace = source["workspace"];
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
	    workspace: string;
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
	        this.workspace = source["workspace"];
	        this.api_key = source["api_key"];
	        this.clear_api_key = source["clear_api_key"];
	    }
	}
	export class Status {
	    sidecar: supervisor.Status;
	    runtimes: supervisor.Status[];
	    version: string;
	    paths: core.Paths;
	    uptime_s: number;
	    stderr_tail: string[];
	
	    static createFrom(source: any = {}) {
	        return new Status(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.sidecar = this.convertValues(source["sidecar"], supervisor.Status);
	        this.runtimes = this.convertValues(source["runtimes"], supervisor.Status);
	        this.version = source["version"];
	        this.paths = this.convertValues(source["paths"], core.Paths);
	        this.uptime_s = source["uptime_s"];
	        this.stderr_tail = source["stderr_tail"];
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
	export class TranscriptPage {
	    session: store.Session;
	    messages: store.Message[];
	    before: boolean;
	    after: boolean;
	
	    static createFrom(source: any = {}) {
	        return new TranscriptPage(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.session = this.convertValues(source["session"], store.Session);
	        this.messages = this.convertValues(source["messages"], store.Message);
	        this.before = source["before"];
	        this.after = source["after"];
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
	export class VaultAnswer {
	    value: string;
	    use_saved: boolean;
	    decline: boolean;
	
	    static createFrom(source: any = {}) {
	        return new VaultAnswer(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.value = source["value"];
	        this.use_saved = source["use_saved"];
	        this.decline = source["decline"];
	    }
	}
	export class VaultResult {
	    ok: boolean;
	    kept: string;
	
	    static createFrom(source: any = {}) {
	        return new VaultResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.ok = source["ok"];
	        this.kept = source["kept"];
	    }
	}

}

export namespace core {
	
	export class Paths {
	    data_dir: string;
	    db_path: string;
	    log_dir: string;
	    app_log: string;
	    sidecar_log: string;
	    cache_dir: string;
	
	    static createFrom(source: any = {}) {
	        return new Paths(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.data_dir = source["data_dir"];
	        this.db_path = source["db_path"];
	        this.log_dir = source["log_dir"];
	        this.app_log = source["app_log"];
	        this.sidecar_log = source["sidecar_log"];
	        this.cache_dir = source["cache_dir"];
	    }
	}
	export class RuntimeFeatures {
	    images: boolean;
	    reasoning_effort: boolean;
	    max_output_tokens: boolean;
	    model_choice: boolean;
	    compaction: boolean;
	    titles: boolean;
	
	    static createFrom(source: any = {}) {
	        return new RuntimeFeatures(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.images = source["images"];
	        this.reasoning_effort = source["reasoning_effort"];
	        this.max_output_tokens = source["max_output_tokens"];
	        this.model_choice = source["model_choice"];
	        this.compaction = source["compaction"];
	        this.titles = source["titles"];
	    }
	}
	export class RuntimeOption {
	    id: string;
	    kind: string;
	    label: string;
	    detail: string;
	    available: boolean;
	    problem: string;
	    hint: string;
	    default: boolean;
	
	    static createFrom(source: any = {}) {
	        return new RuntimeOption(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.kind = source["kind"];
	        this.label = source["label"];
	        this.detail = source["detail"];
	        this.available = source["available"];
	        this.problem = source["problem"];
	        this.hint = source["hint"];
	        this.default = source["default"];
	    }
	}

}

export namespace crashlog {
	
	export class Crash {
	    path: string;
	    at: number;
	    summary: string;
	    text: string;
	
	    static createFrom(source: any = {}) {
	        return new Crash(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.at = source["at"];
	        this.summary = source["summary"];
	        this.text = source["text"];
	    }
	}

}

export namespace history {
	
	export class HermesRequest {
	    runtime_id: string;
	    session_ids: string[];
	    all: boolean;
	
	    static createFrom(source: any = {}) {
	        return new HermesRequest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runtime_id = source["runtime_id"];
	        this.session_ids = source["session_ids"];
	        this.all = source["all"];
	    }
	}
	export class Problem {
	    item: string;
	    outcome: string;
	    message: string;
	    hint?: string;
	
	    static createFrom(source: any = {}) {
	        return new Problem(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.item = source["item"];
	        this.outcome = source["outcome"];
	        this.message = source["message"];
	        this.hint = source["hint"];
	    }
	}
	export class Progress {
	    job_id: string;
	    kind: string;
	    source: string;
	    state: string;
	    total: number;
	    imported: number;
	    skipped: number;
	    failed: number;
	    current: string;
	    problems: Problem[];
	    session_ids: string[];
	    cancel_requested: boolean;
	    error?: string;
	    hint?: string;
	    started_at: number;
	    ended_at?: number;
	
	    static createFrom(source: any = {}) {
	        return new Progress(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.job_id = source["job_id"];
	        this.kind = source["kind"];
	        this.source = source["source"];
	        this.state = source["state"];
	        this.total = source["total"];
	        this.imported = source["imported"];
	        this.skipped = source["skipped"];
	        this.failed = source["failed"];
	        this.current = source["current"];
	        this.problems = this.convertValues(source["problems"], Problem);
	        this.session_ids = source["session_ids"];
	        this.cancel_requested = source["cancel_requested"];
	        this.error = source["error"];
	        this.hint = source["hint"];
	        this.started_at = source["started_at"];
	        this.ended_at = source["ended_at"];
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

export namespace protocol {
	
	export class AgentCaps {
	    load_session: boolean;
	    resume_session: boolean;
	    close_session: boolean;
	    list_sessions: boolean;
	    logout: boolean;
	    images: boolean;
	    audio: boolean;
	    embedded_context: boolean;
	    mcp_http: boolean;
	    mcp_sse: boolean;
	
	    static createFrom(source: any = {}) {
	        return new AgentCaps(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.load_session = source["load_session"];
	        this.resume_session = source["resume_session"];
	        this.close_session = source["close_session"];
	        this.list_sessions = source["list_sessions"];
	        this.logout = source["logout"];
	        this.images = source["images"];
	        this.audio = source["audio"];
	        this.embedded_context = source["embedded_context"];
	        this.mcp_http = source["mcp_http"];
	        this.mcp_sse = source["mcp_sse"];
	    }
	}
	export class AgentHistoryMessage {
	    role: string;
	    content: string;
	    reasoning?: string;
	    name?: string;
	    tool_call_id?: string;
	    args?: Record<string, any>;
	    result?: string;
	    created_at?: number;
	
	    static createFrom(source: any = {}) {
	        return new AgentHistoryMessage(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.role = source["role"];
	        this.content = source["content"];
	        this.reasoning = source["reasoning"];
	        this.name = source["name"];
	        this.tool_call_id = source["tool_call_id"];
	        this.args = source["args"];
	        this.result = source["result"];
	        this.created_at = source["created_at"];
	    }
	}
	export class AgentHistoryResult {
	    agent_session_id: string;
	    title: string;
	    messages: AgentHistoryMessage[];
	
	    static createFrom(source: any = {}) {
	        return new AgentHistoryResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.agent_session_id = source["agent_session_id"];
	        this.title = source["title"];
	        this.messages = this.convertValues(source["messages"], AgentHistoryMessage);
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
	export class AuthMethod {
	    id: string;
	    name: string;
	    description?: string;
	
	    static createFrom(source: any = {}) {
	        return new AuthMethod(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.description = source["description"];
	    }
	}
	export class AgentInfoResult {
	    name: string;
	    title?: string;
	    version: string;
	    protocol_version: number;
	    capabilities: AgentCaps;
	    auth_methods: AuthMethod[];
	    pid: number;
	    command: string[];
	
	    static createFrom(source: any = {}) {
	        return new AgentInfoResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.title = source["title"];
	        this.version = source["version"];
	        this.protocol_version = source["protocol_version"];
	        this.capabilities = this.convertValues(source["capabilities"], AgentCaps);
	        this.auth_methods = this.convertValues(source["auth_methods"], AuthMethod);
	        this.pid = source["pid"];
	        this.command = source["command"];
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
	export class AgentModelProvider {
	    name: string;
	    label: string;
	    models: string[];
	    current: boolean;
	    available: boolean;
	
	    static createFrom(source: any = {}) {
	        return new AgentModelProvider(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.label = source["label"];
	        this.models = source["models"];
	        this.current = source["current"];
	        this.available = source["available"];
	    }
	}
	export class AgentModelsResult {
	    current: string;
	    current_provider: string;
	    providers: AgentModelProvider[];
	
	    static createFrom(source: any = {}) {
	        return new AgentModelsResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.current = source["current"];
	        this.current_provider = source["current_provider"];
	        this.providers = this.convertValues(source["providers"], AgentModelProvider);
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
	export class SlashCommand {
	    name: string;
	    description: string;
	    hint?: string;
	
	    static createFrom(source: any = {}) {
	        return new SlashCommand(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.description = source["description"];
	        this.hint = source["hint"];
	    }
	}
	export class PickerChoice {
	    id: string;
	    name: string;
	    description?: string;
	    self_approves?: string;
	
	    static createFrom(source: any = {}) {
	        return new PickerChoice(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.description = source["description"];
	        this.self_approves = source["self_approves"];
	    }
	}
	export class Picker {
	    id: string;
	    name: string;
	    current: string;
	    choices: PickerChoice[];
	
	    static createFrom(source: any = {}) {
	        return new Picker(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.current = source["current"];
	        this.choices = this.convertValues(source["choices"], PickerChoice);
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
	export class AgentState {
	    agent_session_id: string;
	    modes?: Picker;
	    models?: Picker;
	    options: Picker[];
	    commands: SlashCommand[];
	    self_approves?: string;
	
	    static createFrom(source: any = {}) {
	        return new AgentState(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.agent_session_id = source["agent_session_id"];
	        this.modes = this.convertValues(source["modes"], Picker);
	        this.models = this.convertValues(source["models"], Picker);
	        this.options = this.convertValues(source["options"], Picker);
	        this.commands = this.convertValues(source["commands"], SlashCommand);
	        this.self_approves = source["self_approves"];
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
	
	export class MCPAnnotations {
	    read_only: boolean;
	    destructive: boolean;
	    idempotent: boolean;
	    open_world: boolean;
	
	    static createFrom(source: any = {}) {
	        return new MCPAnnotations(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.read_only = source["read_only"];
	        this.destructive = source["destructive"];
	        this.idempotent = source["idempotent"];
	        this.open_world = source["open_world"];
	    }
	}
	export class MCPContent {
	    type: string;
	    text?: string;
	    mime_type?: string;
	    data?: string;
	    size?: number;
	    omitted?: string;
	    uri?: string;
	    name?: string;
	    title?: string;
	    description?: string;
	
	    static createFrom(source: any = {}) {
	        return new MCPContent(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.type = source["type"];
	        this.text = source["text"];
	        this.mime_type = source["mime_type"];
	        this.data = source["data"];
	        this.size = source["size"];
	        this.omitted = source["omitted"];
	        this.uri = source["uri"];
	        this.name = source["name"];
	        this.title = source["title"];
	        this.description = source["description"];
	    }
	}
	export class MCPPromptArgument {
	    name: string;
	    title?: string;
	    description?: string;
	    required?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new MCPPromptArgument(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.title = source["title"];
	        this.description = source["description"];
	        this.required = source["required"];
	    }
	}
	export class MCPPromptInfo {
	    name: string;
	    title?: string;
	    description?: string;
	    arguments: MCPPromptArgument[];
	
	    static createFrom(source: any = {}) {
	        return new MCPPromptInfo(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.title = source["title"];
	        this.description = source["description"];
	        this.arguments = this.convertValues(source["arguments"], MCPPromptArgument);
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
	export class MCPResourceInfo {
	    uri: string;
	    name: string;
	    title?: string;
	    description?: string;
	    mime_type?: string;
	    size?: number;
	    template?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new MCPResourceInfo(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.uri = source["uri"];
	        this.name = source["name"];
	        this.title = source["title"];
	        this.description = source["description"];
	        this.mime_type = source["mime_type"];
	        this.size = source["size"];
	        this.template = source["template"];
	    }
	}
	export class MCPResourceReadResult {
	    contents: MCPContent[];
	
	    static createFrom(source: any = {}) {
	        return new MCPResourceReadResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.contents = this.convertValues(source["contents"], MCPContent);
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
	export class MCPToolInfo {
	    name: string;
	    title?: string;
	    description?: string;
	    annotations: MCPAnnotations;
	    input_schema?: number[];
	
	    static createFrom(source: any = {}) {
	        return new MCPToolInfo(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.title = source["title"];
	        this.description = source["description"];
	        this.annotations = this.convertValues(source["annotations"], MCPAnnotations);
	        this.input_schema = source["input_schema"];
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
	export class MCPWithheldFolder {
	    path: string;
	    reason: string;
	
	    static createFrom(source: any = {}) {
	        return new MCPWithheldFolder(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.reason = source["reason"];
	    }
	}
	export class MCPServerReport {
	    name: string;
	    ok: boolean;
	    error?: string;
	    hint?: string;
	    stderr?: string;
	    server_name?: string;
	    server_version?: string;
	    protocol?: string;
	    instructions?: string;
	    writable?: string[];
	    withheld?: MCPWithheldFolder[];
	    tools: MCPToolInfo[];
	    prompts: MCPPromptInfo[];
	    resources: MCPResourceInfo[];
	    took_ms: number;
	
	    static createFrom(source: any = {}) {
	        return new MCPServerReport(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.ok = source["ok"];
	        this.error = source["error"];
	        this.hint = source["hint"];
	        this.stderr = source["stderr"];
	        this.server_name = source["server_name"];
	        this.server_version = source["server_version"];
	        this.protocol = source["protocol"];
	        this.instructions = source["instructions"];
	        this.writable = source["writable"];
	        this.withheld = this.convertValues(source["withheld"], MCPWithheldFolder);
	        this.tools = this.convertValues(source["tools"], MCPToolInfo);
	        this.prompts = this.convertValues(source["prompts"], MCPPromptInfo);
	        this.resources = this.convertValues(source["resources"], MCPResourceInfo);
	        this.took_ms = source["took_ms"];
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
	
	
	
	
	export class SandboxStatus {
	    available: boolean;
	    mechanism?: string;
	    reason?: string;
	    hint?: string;
	    agent?: string;
	    terminal_mechanism?: string;
	
	    static createFrom(source: any = {}) {
	        return new SandboxStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.available = source["available"];
	        this.mechanism = source["mechanism"];
	        this.reason = source["reason"];
	        this.hint = source["hint"];
	        this.agent = source["agent"];
	        this.terminal_mechanism = source["terminal_mechanism"];
	    }
	}
	
	export class SteerNowResult {
	    withdrawn: boolean;
	    redirected: boolean;
	    delivery: string;
	    requeued: boolean;
	
	    static createFrom(source: any = {}) {
	        return new SteerNowResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.withdrawn = source["withdrawn"];
	        this.redirected = source["redirected"];
	        this.delivery = source["delivery"];
	        this.requeued = source["requeued"];
	    }
	}
	export class ToolFunction {
	    name: string;
	    arguments: string;
	
	    static createFrom(source: any = {}) {
	        return new ToolFunction(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.arguments = source["arguments"];
	    }
	}
	export class ToolCall {
	    id: string;
	    type: string;
	    function: ToolFunction;
	
	    static createFrom(source: any = {}) {
	        return new ToolCall(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.type = source["type"];
	        this.function = this.convertValues(source["function"], ToolFunction);
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
	
	export class Usage {
	    input_tokens: number;
	    output_tokens: number;
	    cache_read_tokens: number;
	    cache_write_tokens: number;
	    estimated_cost: number;
	    cost_reported?: boolean;
	
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
	        this.cost_reported = source["cost_reported"];
	    }
	}

}

export namespace remote {
	
	export class Host {
	    name: string;
	    target: string;
	    port: number;
	    identity_file: string;
	    hermes: string;
	
	    static createFrom(source: any = {}) {
	        return new Host(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.target = source["target"];
	        this.port = source["port"];
	        this.identity_file = source["identity_file"];
	        this.hermes = source["hermes"];
	    }
	}
	export class Probe {
	    os: string;
	    arch: string;
	    home: string;
	    hermes_python: string;
	    hermes_version: string;
	    hermes_home: string;
	    agents: {[key: string]: string};
	    bubblewrap: boolean;
	    sidecar: string;
	    notes: string[];
	
	    static createFrom(source: any = {}) {
	        return new Probe(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.os = source["os"];
	        this.arch = source["arch"];
	        this.home = source["home"];
	        this.hermes_python = source["hermes_python"];
	        this.hermes_version = source["hermes_version"];
	        this.hermes_home = source["hermes_home"];
	        this.agents = source["agents"];
	        this.bubblewrap = source["bubblewrap"];
	        this.sidecar = source["sidecar"];
	        this.notes = source["notes"];
	    }
	}
	export class HostRecord {
	    name: string;
	    target: string;
	    port: number;
	    identity_file: string;
	    hermes: string;
	    probe?: Probe;
	    probed_at: number;
	
	    static createFrom(source: any = {}) {
	        return new HostRecord(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.target = source["target"];
	        this.port = source["port"];
	        this.identity_file = source["identity_file"];
	        this.hermes = source["hermes"];
	        this.probe = this.convertValues(source["probe"], Probe);
	        this.probed_at = source["probed_at"];
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

export namespace store {
	
	export class Attachment {
	    id: string;
	    session_id: string;
	    message_id?: number;
	    sha256: string;
	    name: string;
	    mime_type: string;
	    kind: string;
	    size: number;
	    sent_bytes: number;
	    created_at: number;
	    data?: number[];
	
	    static createFrom(source: any = {}) {
	        return new Attachment(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.session_id = source["session_id"];
	        this.message_id = source["message_id"];
	        this.sha256 = source["sha256"];
	        this.name = source["name"];
	        this.mime_type = source["mime_type"];
	        this.kind = source["kind"];
	        this.size = source["size"];
	        this.sent_bytes = source["sent_bytes"];
	        this.created_at = source["created_at"];
	        this.data = source["data"];
	    }
	}
	export class AuditEntry {
	    id: number;
	    created_at: number;
	    session_id: string;
	    session_title: string;
	    stream_id: string;
	    runtime: string;
	    kind: string;
	    tool: string;
	    subject: string;
	    pattern: string;
	    description: string;
	    decision: string;
	    decided_by: string;
	    policy: string;
	
	    static createFrom(source: any = {}) {
	        return new AuditEntry(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.created_at = source["created_at"];
	        this.session_id = source["session_id"];
	        this.session_title = source["session_title"];
	        this.stream_id = source["stream_id"];
	        this.runtime = source["runtime"];
	        this.kind = source["kind"];
	        this.tool = source["tool"];
	        this.subject = source["subject"];
	        this.pattern = source["pattern"];
	        this.description = source["description"];
	        this.decision = source["decision"];
	        this.decided_by = source["decided_by"];
	        this.policy = source["policy"];
	    }
	}
	export class AuditFilter {
	    session_id?: string;
	    decision?: string;
	    text?: string;
	    limit?: number;
	    before_id?: number;
	
	    static createFrom(source: any = {}) {
	        return new AuditFilter(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.session_id = source["session_id"];
	        this.decision = source["decision"];
	        this.text = source["text"];
	        this.limit = source["limit"];
	        this.before_id = source["before_id"];
	    }
	}
	export class Draft {
	    session_id: string;
	    text: string;
	    updated_at: number;
	
	    static createFrom(source: any = {}) {
	        return new Draft(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.session_id = source["session_id"];
	        this.text = source["text"];
	        this.updated_at = source["updated_at"];
	    }
	}
	export class RowError {
	    type: string;
	    label: string;
	    message: string;
	    hint: string;
	
	    static createFrom(source: any = {}) {
	        return new RowError(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.type = source["type"];
	        this.label = source["label"];
	        this.message = source["message"];
	        this.hint = source["hint"];
	    }
	}
	export class Message {
	    id: number;
	    session_id: string;
	    position: number;
	    role: string;
	    content: string;
	    reasoning?: string;
	    tool_calls?: protocol.ToolCall[];
	    tool_call_id?: string;
	    name?: string;
	    kind?: string;
	    stream_id?: string;
	    created_at: number;
	    attachments?: Attachment[];
	    summary_covers?: number;
	    error?: RowError;
	
	    static createFrom(source: any = {}) {
	        return new Message(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.session_id = source["session_id"];
	        this.position = source["position"];
	        this.role = source["role"];
	        this.content = source["content"];
	        this.reasoning = source["reasoning"];
	        this.tool_calls = this.convertValues(source["tool_calls"], protocol.ToolCall);
	        this.tool_call_id = source["tool_call_id"];
	        this.name = source["name"];
	        this.kind = source["kind"];
	        this.stream_id = source["stream_id"];
	        this.created_at = source["created_at"];
	        this.attachments = this.convertValues(source["attachments"], Attachment);
	        this.summary_covers = source["summary_covers"];
	        this.error = this.convertValues(source["error"], RowError);
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
	export class RecoveryReport {
	    recovered: boolean;
	    backup_path: string;
	    sessions: number;
	    messages: number;
	    message: string;
	    problems?: string[];
	    at: number;
	
	    static createFrom(source: any = {}) {
	        return new RecoveryReport(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.recovered = source["recovered"];
	        this.backup_path = source["backup_path"];
	        this.sessions = source["sessions"];
	        this.messages = source["messages"];
	        this.message = source["message"];
	        this.problems = source["problems"];
	        this.at = source["at"];
	    }
	}
	
	export class SearchHit {
	    session_id: string;
	    title: string;
	    title_highlight: string;
	    message_id: number;
	    position: number;
	    role: string;
	    snippet: string;
	    rank: number;
	    updated_at: number;
	    archived: boolean;
	
	    static createFrom(source: any = {}) {
	        return new SearchHit(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.session_id = source["session_id"];
	        this.title = source["title"];
	        this.title_highlight = source["title_highlight"];
	        this.message_id = source["message_id"];
	        this.position = source["position"];
	        this.role = source["role"];
	        this.snippet = source["snippet"];
	        this.rank = source["rank"];
	        this.updated_at = source["updated_at"];
	        this.archived = source["archived"];
	    }
	}
	export class Session {
	    id: string;
	    title: string;
	    title_manual: boolean;
	    model: string;
	    workspace: string;
	    created_at: number;
	    updated_at: number;
	    active_stream_id: string;
	    revision: number;
	    message_count: number;
	    usage: protocol.Usage;
	    pinned: boolean;
	    archived_at: number;
	    forked_from: string;
	    hidden: boolean;
	    parent_id: string;
	    runtime: string;
	    agent_session_id: string;
	    options: Record<string, any>;
	
	    static createFrom(source: any = {}) {
	        return new Session(source);
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
	        this.revision = source["revision"];
	        this.message_count = source["message_count"];
	        this.usage = this.convertValues(source["usage"], protocol.Usage);
	        this.pinned = source["pinned"];
	        this.archived_at = source["archived_at"];
	        this.forked_from = source["forked_from"];
	        this.hidden = source["hidden"];
	        this.parent_id = source["parent_id"];
	        this.runtime = source["runtime"];
	        this.agent_session_id = source["agent_session_id"];
	        this.options = source["options"];
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
	export class TurnFigures {
	    stream_id: string;
	    started_at: number;
	    ended_at: number;
	    terminal: string;
	    usage: protocol.Usage;
	    model: string;
	    context_tokens: number;
	    cost_source: string;
	
	    static createFrom(source: any = {}) {
	        return new TurnFigures(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.stream_id = source["stream_id"];
	        this.started_at = source["started_at"];
	        this.ended_at = source["ended_at"];
	        this.terminal = source["terminal"];
	        this.usage = this.convertValues(source["usage"], protocol.Usage);
	        this.model = source["model"];
	        this.context_tokens = source["context_tokens"];
	        this.cost_source = source["cost_source"];
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

export namespace supervisor {
	
	export class Status {
	    runtime_id: string;
	    state: string;
	    runtime: string;
	    agent_version: string;
	    sidecar_version: string;
	    python: string;
	    protocol: number;
	    dialect?: string;
	    features?: string[];
	    attempt: number;
	    next_retry_s: number;
	    error: string;
	    hint: string;
	    pid: number;
	    restarts: number;
	    started_at: number;
	    sandbox?: protocol.SandboxStatus;
	    capabilities: string[];
	    connection?: string;
	
	    static createFrom(source: any = {}) {
	        return new Status(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runtime_id = source["runtime_id"];
	        this.state = source["state"];
	        this.runtime = source["runtime"];
	        this.agent_version = source["agent_version"];
	        this.sidecar_version = source["sidecar_version"];
	        this.python = source["python"];
	        this.protocol = source["protocol"];
	        this.dialect = source["dialect"];
	        this.features = source["features"];
	        this.attempt = source["attempt"];
	        this.next_retry_s = source["next_retry_s"];
	        this.error = source["error"];
	        this.hint = source["hint"];
	        this.pid = source["pid"];
	        this.restarts = source["restarts"];
	        this.started_at = source["started_at"];
	        this.sandbox = this.convertValues(source["sandbox"], protocol.SandboxStatus);
	        this.capabilities = source["capabilities"];
	        this.connection = source["connection"];
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

export namespace tasks {
	
	export class Pending {
	    approval: number[];
	    clarify: number[];
	    approval_count: number;
	    clarify_count: number;
	
	    static createFrom(source: any = {}) {
	        return new Pending(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.approval = source["approval"];
	        this.clarify = source["clarify"];
	        this.approval_count = source["approval_count"];
	        this.clarify_count = source["clarify_count"];
	    }
	}
	export class Result {
	    task_id: string;
	    session_id: string;
	    status: string;
	    prompt: string;
	    text: string;
	    error: string;
	    ended_at: number;
	
	    static createFrom(source: any = {}) {
	        return new Result(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.task_id = source["task_id"];
	        this.session_id = source["session_id"];
	        this.status = source["status"];
	        this.prompt = source["prompt"];
	        this.text = source["text"];
	        this.error = source["error"];
	        this.ended_at = source["ended_at"];
	    }
	}
	export class SideQuestion {
	    id: string;
	    parent_session_id: string;
	    session_id: string;
	    stream_id: string;
	    question: string;
	
	    static createFrom(source: any = {}) {
	        return new SideQuestion(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.parent_session_id = source["parent_session_id"];
	        this.session_id = source["session_id"];
	        this.stream_id = source["stream_id"];
	        this.question = source["question"];
	    }
	}
	export class Task {
	    id: string;
	    parent_session_id: string;
	    session_id: string;
	    stream_id: string;
	    prompt: string;
	    status: string;
	    queue_position: number;
	    result_preview: string;
	    error: string;
	    created_at: number;
	    started_at: number;
	    ended_at: number;
	    pending: Pending;
	
	    static createFrom(source: any = {}) {
	        return new Task(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.parent_session_id = source["parent_session_id"];
	        this.session_id = source["session_id"];
	        this.stream_id = source["stream_id"];
	        this.prompt = source["prompt"];
	        this.status = source["status"];
	        this.queue_position = source["queue_position"];
	        this.result_preview = source["result_preview"];
	        this.error = source["error"];
	        this.created_at = source["created_at"];
	        this.started_at = source["started_at"];
	        this.ended_at = source["ended_at"];
	        this.pending = this.convertValues(source["pending"], Pending);
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

export namespace turn {
	
	export class Frame {
	    session_id: string;
	    stream_id: string;
	    seq: number;
	    event: string;
	    data: number[];
	
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
	export class Price {
	    input: number;
	    output: number;
	    cached_input?: number;
	
	    static createFrom(source: any = {}) {
	        return new Price(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.input = source["input"];
	        this.output = source["output"];
	        this.cached_input = source["cached_input"];
	    }
	}
	export class Started {
	    stream_id: string;
	    user_message: store.Message;
	
	    static createFrom(source: any = {}) {
	        return new Started(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.stream_id = source["stream_id"];
	        this.user_message = this.convertValues(source["user_message"], store.Message);
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
	export class SteerInfo {
	    id: string;
	    text: string;
	    created_at: number;
	
	    static createFrom(source: any = {}) {
	        return new SteerInfo(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.text = source["text"];
	        this.created_at = source["created_at"];
	    }
	}
	export class SteerOutcome {
	    steer_id: string;
	    stream_id: string;
	    delivery: string;
	    user_message?: store.Message;
	
	    static createFrom(source: any = {}) {
	        return new SteerOutcome(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.steer_id = source["steer_id"];
	        this.stream_id = source["stream_id"];
	        this.delivery = source["delivery"];
	        this.user_message = this.convertValues(source["user_message"], store.Message);
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

