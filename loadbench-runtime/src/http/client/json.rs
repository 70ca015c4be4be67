//! JSON bodies through serde: [`RequestBuilder::json`] and [`Response::json`]. serde_json is
//! already one of the runtime's dependencies (the reports are JSON), so these cost no feature
//! flag and no build time.

use http::header::{CONTENT_TYPE, HeaderValue};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::builder::RequestBuilder;
use crate::error::{Error, ErrorKind, Result};
use crate::http::wire::response::Response;

impl<'a> RequestBuilder<'a> {
    /// Sets the body to `value` as JSON (serde_json), with `content-type: application/json`
    /// unless the request already has a content type. A value that cannot be serialized (a map
    /// with non-string keys, a failing `Serialize`) makes [`send`](Self::send) fail with a
    /// scenario error.
    ///
    /// ```no_run
    /// #[derive(serde::Serialize)]
    /// struct Item<'a> {
    ///     name: &'a str,
    ///     price: u32,
    /// }
    ///
    /// # async fn body(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    /// ctx.post("/items").json(&Item { name: "widget", price: 3 }).send().await?.expect_status(201)?;
    /// # Ok(()) }
    /// ```
    pub fn json<T: Serialize + ?Sized>(mut self, value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(body) => {
                self.headers_mut().entry(CONTENT_TYPE).or_insert(HeaderValue::from_static("application/json"));
                self.body(body)
            }
            Err(e) => {
                if self.error.is_none() {
                    self.error = Some(Error::with_source(ErrorKind::Scenario, "cannot serialize the JSON body", e));
                }
                self
            }
        }
    }
}

impl Response {
    /// Parses the body as JSON into a `T` (serde_json). A body that is not a `T` fails with a
    /// scenario error naming the type and where in the body serde stopped.
    ///
    /// ```no_run
    /// #[derive(serde::Deserialize)]
    /// struct Created {
    ///     id: u64,
    /// }
    ///
    /// # async fn body(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
    /// let created: Created = ctx.post("/items").json(&"widget").send().await?.expect_status(201)?.json()?;
    /// ctx.get(&format!("/items/{}", created.id)).send().await?.expect_status(200)?;
    /// // Or untyped:
    /// let item: loadbench::JsonValue = ctx.get("/items/1").send().await?.json()?;
    /// # Ok(()) }
    /// ```
    pub fn json<T: DeserializeOwned>(&self) -> Result<T> {
        serde_json::from_slice(self.bytes()).map_err(|e| {
            let ty = std::any::type_name::<T>();
            Error::with_source(ErrorKind::Scenario, format!("the response body is not a JSON `{ty}`"), e)
        })
    }
}
