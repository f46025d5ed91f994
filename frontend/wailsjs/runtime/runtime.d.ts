// Types for the Wails v2 runtime wrapper (runtime.js). Managed by the Wails CLI.

export interface Position {
    x: number;
    y: number;
}

export interface Size {
    w: number;
    h: number;
}

export interface Screen {
    isCurrent: boolean;
    isPrimary: boolean;
    width : number
    height : number
}

export interface EnvironmentInfo {
    buildType: string;
    platform: string;
    arch: string;
}

export function LogPrint(message: string): void;

export function LogTrace(message: string): void;

export function LogDebug(message: string): void;

export function LogInfo(message: string): void;

export function LogWarning(message: string): void;

export function LogError(message: string): void;

export function LogFatal(message: string): void;

export function EventsOnMultiple(eventName: string, callback: (...data: any) => void, maxCallbacks: number): () => void;

export function EventsOn(eventName: string, callback: (...data: any) => void): () => void;

export function EventsOff(eventName: string, ...additionalEventNames: string[]): void;

export function EventsOnce(eventName: string, callback: (...data: any) => void): () => void;

export function EventsEmit(eventName: string, ...data: any): void;

export function WindowReload(): void;

export function WindowReloadApp(): void;

export function WindowSetAlwaysOnTop(b: boolean): void;

export function WindowSetSystemDefaultTheme(): void;

export function WindowSetLightTheme(): void;

export function WindowSetDarkTheme(): void;

export function WindowCenter(): void;

export function WindowSetTitle(title: string): void;

export function WindowFullscreen(): void;

export function WindowUnfullscreen(): void;

export function WindowIsFullscreen(): Promise<boolean>;

export function WindowGetSize(): Promise<Size>;

export function WindowSetSize(width: number, height: number): void;

export function WindowSetMaxSize(width: number, height: number): void;

export function WindowSetMinSize(width: number, height: number): void;

export function WindowSetPosition(x: number, y: number): void;

export function WindowGetPosition(): Promise<Position>;

export function WindowHide(): void;

export function WindowShow(): void;

export function WindowMaximise(): void;

export function WindowToggleMaximise(): void;

export function WindowUnmaximise(): void;

export function WindowIsMaximised(): Promise<boolean>;

export function WindowMinimise(): void;

export function WindowUnminimise(): void;

export function WindowSetBackgroundColour(R: number, G: number, B: number, A: number): void;

export function ScreenGetAll(): Promise<Screen[]>;

export function WindowIsMinimised(): Promise<boolean>;

export function WindowIsNormal(): Promise<boolean>;

export function BrowserOpenURL(url: string): void;

export function Environment(): Promise<EnvironmentInfo>;

export function Quit(): void;

export function Hide(): void;

export function Show(): void;

export function ClipboardGetText(): Promise<string>;

export function ClipboardSetText(text: string): Promise<boolean>;

export function OnFileDrop(callback: (x: number, y: number, paths: string[]) => void, useDropTarget: boolean): void;

export function OnFileDropOff(): void;

export function CanResolveFilePaths(): boolean;

export function ResolveFilePaths(files: File[]): void;
