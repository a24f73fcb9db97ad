//! A throwaway PostgreSQL server for tests and benchmarks: `initdb` into a
//! temp folder (as `nobody` when running as root: PostgreSQL refuses root),
//! a free loopback port, its socket in the temp folder.
//!
//! One server per test binary run ([`PgServer::shared`]); each test takes a
//! fresh database ([`PgServer::create_database`]). A watcher process (a tiny
//! `sh`) holds a pipe from this process: when this process ends — normally,
//! by a panic or by SIGKILL — or the [`PgServer`] is dropped, the pipe
//! closes and the watcher stops the server and removes the folder.
//!
//! Binaries: `$LOUSHO_PG_BIN`, else the newest `/usr/lib/postgresql/*/bin`
//! (Debian's `postgresql` package). Missing: [`PgServer::shared`] returns
//! `None` (the test skips) — except under `CI=true`, where it panics.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, mpsc};
use std::time::Duration;

/// A running PostgreSQL server, stopped (and its folder removed) when this
/// is dropped or the process ends.
#[derive(Debug)]
pub struct PgServer {
    port: u16,
    bin: PathBuf,
    dir: PathBuf,
    /// Closing it tells the watcher to stop the server.
    watcher: Mutex<Option<ChildStdin>>,
}

static SHARED: OnceLock<Option<PgServer>> = OnceLock::new();
static DATABASES: AtomicUsize = AtomicUsize::new(0);

impl PgServer {
    /// The server this test binary shares, started on first use. `None`
    /// when PostgreSQL is not installed (a panic under `CI=true`).
    pub fn shared() -> Option<&'static PgServer> {
        SHARED
            .get_or_init(|| match find_bin() {
                Some(bin) => Some(PgServer::start(&bin).unwrap_or_else(|e| panic!("{e}"))),
                None if std::env::var("CI").as_deref() == Ok("true") => panic!(
                    "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres, \
                     LOUSHO_PG_BIN unset); under CI=true the PostgreSQL tests must run: \
                     apt-get install -y postgresql"
                ),
                None => {
                    eprintln!("PostgreSQL is not installed: skipping the PostgreSQL tests");
                    None
                }
            })
            .as_ref()
    }

    /// Starts a new server from the binaries in `bin`.
    pub fn start(bin: &Path) -> Result<PgServer, String> {
        Self::launch(bin, false)
    }

    /// Starts a new server that also takes TLS connections, with a
    /// certificate for `127.0.0.1` and `localhost` signed by a throwaway
    /// certificate authority (made with the `openssl` command):
    /// [`ca_certificate`](Self::ca_certificate) is its PEM file.
    pub fn start_tls(bin: &Path) -> Result<PgServer, String> {
        Self::launch(bin, true)
    }

    /// The PEM file of the authority that signed a [`start_tls`](Self::start_tls)
    /// server's certificate.
    pub fn ca_certificate(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    fn launch(bin: &Path, tls: bool) -> Result<PgServer, String> {
        let n = DATABASES.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("lousho-pg-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let owner = unprivileged_owner()?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
                .map_err(|e| format!("chown {}: {e}", dir.display()))?;
        }
        let data = dir.join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .args(["-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"])
            .args(["--no-sync", "--no-instructions", "-D"])
            .arg(&data)
            .current_dir(&dir)
            .stdin(Stdio::null());
        as_owner(&mut initdb, owner);
        let out = initdb
            .output()
            .map_err(|e| format!("running initdb: {e}"))?;
        if !out.status.success() {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let tls_args = if tls {
            make_certificates(&dir, owner)?;
            vec![
                "-c".to_owned(),
                "ssl=on".to_owned(),
                "-c".to_owned(),
                format!("ssl_cert_file={}", dir.join("server.pem").display()),
                "-c".to_owned(),
                format!("ssl_key_file={}", dir.join("server.key").display()),
            ]
        } else {
            Vec::new()
        };
        let port = free_port()?;
        let mut postgres = Command::new(bin.join("postgres"));
        postgres
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-h", "127.0.0.1", "-k"])
            .arg(&dir)
            // A test server: durability is not what is tested here.
            .args(["-c", "fsync=off", "-c", "full_page_writes=off"])
            .args(["-c", "max_connections=200"])
            .args(&tls_args)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        as_owner(&mut postgres, owner);
        let mut child = postgres
            .spawn()
            .map_err(|e| format!("starting postgres: {e}"))?;
        let pid = child.id();
        // The watcher: stops the server and removes the folder once the pipe
        // on its stdin closes (this process ended or dropped the server).
        let mut watcher = Command::new("sh")
            .arg("-c")
            .arg(
                "read _; kill -INT \"$1\" 2>/dev/null; \
                 while kill -0 \"$1\" 2>/dev/null; do sleep 0.05; done; rm -rf \"$2\"",
            )
            .arg("sh")
            .arg(pid.to_string())
            .arg(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("starting the watcher: {e}"))?;
        let pipe = watcher.stdin.take();
        let server = PgServer {
            port,
            bin: bin.to_path_buf(),
            dir,
            watcher: Mutex::new(pipe),
        };
        // Ready when the log says so; the thread keeps draining the log.
        let stderr = child.stderr.take().ok_or("postgres has no stderr")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut log = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("ready to accept connections") {
                    let _ = tx.send(Ok(()));
                } else if log.len() < 50 {
                    log.push(line);
                }
            }
            let _ = tx.send(Err(log.join("\n")));
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(())) => Ok(server),
            Ok(Err(log)) => Err(format!("postgres exited before it was ready:\n{log}")),
            Err(_) => Err("postgres was not ready within 60 s".into()),
        }
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The folder holding its data and socket.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A connection string (libpq key=value form) for database `name`.
    pub fn conn_string(&self, name: &str) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname={name}",
            self.port
        )
    }

    /// Creates a new, empty database and returns its connection string.
    pub fn create_database(&self) -> String {
        let n = DATABASES.fetch_add(1, Ordering::SeqCst);
        let name = format!("t{}_{n}", std::process::id());
        let out = Command::new(self.bin.join("createdb"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
            ])
            .arg(&name)
            .stdin(Stdio::null())
            .output()
            .expect("running createdb");
        assert!(
            out.status.success(),
            "createdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.conn_string(&name)
    }

    /// Stops the server now (as dropping it does).
    pub fn stop(&self) {
        if let Some(mut pipe) = self.watcher.lock().unwrap().take() {
            let _ = pipe.write_all(b"stop\n");
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `$LOUSHO_PG_BIN`, else the newest `/usr/lib/postgresql/*/bin` with a
/// `postgres` in it.
pub fn find_bin() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("LOUSHO_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

/// A throwaway certificate authority (`ca.pem`) and a server certificate
/// for 127.0.0.1 and localhost it signed (`server.pem`, `server.key`, the
/// key readable by the server's `owner` only, as PostgreSQL demands), in
/// `dir`, by the `openssl` command.
fn make_certificates(dir: &Path, owner: Option<(u32, u32)>) -> Result<(), String> {
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n\
         extendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n",
    )
    .map_err(|e| format!("writing server.ext: {e}"))?;
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let steps: [Vec<&str>; 3] = [
        [
            &["req", "-x509", "-new"][..],
            &ec,
            &["-keyout", "ca.key", "-out", "ca.pem", "-days", "2"],
            &[
                "-subj",
                "/CN=lousho test CA",
                "-addext",
                "basicConstraints=critical,CA:TRUE",
            ],
            &["-addext", "keyUsage=critical,keyCertSign,cRLSign"],
        ]
        .concat(),
        [
            &["req", "-new"][..],
            &ec,
            &["-keyout", "server.key", "-out", "server.csr"],
            &["-subj", "/CN=localhost"],
        ]
        .concat(),
        vec![
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ],
    ];
    for args in steps {
        let out = Command::new("openssl")
            .args(&args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("running openssl (apt-get install openssl): {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "openssl {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let key = dir.join("server.key");
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .map_err(|e| format!("chmod {}: {e}", key.display()))?;
    if let Some((uid, gid)) = owner {
        for file in ["server.key", "server.pem"] {
            std::os::unix::fs::chown(dir.join(file), Some(uid), Some(gid))
                .map_err(|e| format!("chown {file}: {e}"))?;
        }
    }
    Ok(())
}

/// When running as root: the uid and gid of `nobody` (PostgreSQL will not
/// run as root).
fn unprivileged_owner() -> Result<Option<(u32, u32)>, String> {
    let me = Command::new("id")
        .arg("-u")
        .output()
        .map_err(|e| format!("running id: {e}"))?;
    if String::from_utf8_lossy(&me.stdout).trim() != "0" {
        return Ok(None);
    }
    let id = |flag: &str| -> Result<u32, String> {
        let out = Command::new("id")
            .args([flag, "nobody"])
            .output()
            .map_err(|e| format!("running id: {e}"))?;
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .map_err(|_| "running as root and there is no user nobody to run PostgreSQL as".into())
    };
    Ok(Some((id("-u")?, id("-g")?)))
}

fn as_owner(cmd: &mut Command, owner: Option<(u32, u32)>) {
    // From root, std also drops the supplementary groups.
    if let Some((uid, gid)) = owner {
        cmd.uid(uid).gid(gid);
    }
}

fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}
