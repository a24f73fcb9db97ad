mod peers;
mod serve_interop;
mod serve_stdio;
